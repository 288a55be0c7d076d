/**
 * Call tracking off the response path: each settled call becomes one `{skillId, amount, paymentRef}`
 * record, queued in memory and delivered in the background in batches (`POST /analytics/calls`,
 * sent once `batchSize` records wait or the oldest has waited `batchDelayMs`), with exponential
 * back-off. The first batch goes alone; a registry without the batch route (404) then gets one
 * `POST /analytics/call` per record, that batch's records included. A registry outage never slows
 * a paid call; a record is dropped only after `maxAttempts` (or when the registry refuses it for good, or the queue overflows), always
 * with a warning. The transaction hash is the paymentRef and the authorization nonce the paymentNonce
 * (one payment of a batch), so a repeated delivery counts once and each payment of a batch counts.
 * A call paid over a channel is named by its channel and the channel's cumulative charge after it
 * (`channelId`, `chargedCumulativeAmount`) instead: unique per call, like a paymentRef. A call
 * whose answer carried a signed receipt (receipts.ts) sends it with the record. A free trial call is
 * `kind: 'trial'` with amount 0, named by its sign-in nonce. A tiered call names its `tier`.
 *
 * A record kept durably elsewhere until the registry has it (a channel call's, kept with its channel:
 * `hooks.kept`) is never dropped here for its attempts or the queue's size: it is retried until the
 * registry answers for it (recorded, a duplicate, or refused for good), and then `hooks.delivered`
 * lets its keeper drop it; one still queued at a crash is sent again after the restart.
 */
import { RegistryError } from '../http/errors';
import { errorText, type CreatorLogger } from './logger';
import type { SettledCall } from './scheme';
import type { RegistryClient } from '../registry/client';
import { MAX_CALL_BATCH, type CallBody } from '../registry/contract/index';

/** Tuning of call tracking (`serve({ trackCalls: { … } })`). */
export interface TrackingOptions {
  /** First retry delay in ms, doubled per attempt; default 1000. */
  baseDelayMs?: number;
  /** Longest retry delay in ms; default 60 000. */
  maxDelayMs?: number;
  /** Deliveries tried per record before it is dropped; default 12 (about 10 minutes of outage). */
  maxAttempts?: number;
  /** Records waiting at most; beyond it the oldest is dropped; default 10 000. */
  maxQueue?: number;
  /** Requests in flight at once; default 4. */
  concurrency?: number;
  /** Records per batch at most; a full batch is sent at once; default 50 (the registry takes up to 100). */
  batchSize?: number;
  /** Longest wait in ms of a new record for others to share its request; default 200. */
  batchDelayMs?: number;
}

/** How call tracking works with records kept durably elsewhere (serve() passes the channels' outbox). */
export interface TrackerHooks {
  /** Whether a record is kept until {@link delivered}: never dropped here, queued once however often it is tracked. */
  kept?(call: SettledCall): boolean;
  /** The registry has the record (recorded, or a duplicate) or refused it for good. */
  delivered?(call: SettledCall): void;
}

export interface CallTracker {
  /** Queues a record; returns at once. */
  track(call: SettledCall): void;
  /** Skill ids known from registration, by skill name. */
  remember(name: string, skillId: string): void;
  /** Tries everything still queued now and waits up to `timeoutMs`; true when nothing is left. */
  flush(timeoutMs: number): Promise<boolean>;
  /** Records queued or in flight. */
  pending(): number;
  /** Stops delivering; what is left is dropped with a warning. */
  stop(): void;
}

interface Item {
  call: SettledCall;
  attempts: number;
  nextAt: number;
}

export function createCallTracker(
  client: RegistryClient,
  logger: CreatorLogger,
  options: TrackingOptions = {},
  hooks: TrackerHooks = {},
): CallTracker {
  const baseDelayMs = options.baseDelayMs ?? 1000;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  const maxAttempts = options.maxAttempts ?? 12;
  const maxQueue = options.maxQueue ?? 10_000;
  const concurrency = options.concurrency ?? 4;
  const batchSize = Math.max(1, Math.min(MAX_CALL_BATCH, options.batchSize ?? 50));
  const batchDelayMs = options.batchDelayMs ?? 200;
  const skillIds = new Map<string, string>();
  const missingUntil = new Map<string, number>();
  const queue: Item[] = [];
  const idle = new Set<() => void>();
  /** Requests in flight, and the records they carry. */
  let inFlight = 0;
  let recordsInFlight = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lookup: Promise<void> | undefined;
  let stopped = false;
  /**
   * Whether the registry takes batches: unknown until the first batch is answered (only one request
   * is in flight until then), `singles` once it answered 404 for the batch route (a registry of
   * another kind: one request per record from then on).
   */
  let route: 'unknown' | 'batches' | 'singles' = 'unknown';
  /** Kept records queued or in flight, by channel and cumulative charge. */
  const keptKeys = new Set<string>();
  const keyOf = (call: SettledCall) => `${call.channelId?.toLowerCase()}\n${call.chargedCumulativeAmount}`;
  const isKept = (call: SettledCall) => hooks.kept?.(call) ?? false;
  /** The registry answered for the record: its keeper may drop it. */
  const finish = (call: SettledCall) => {
    if (isKept(call)) keptKeys.delete(keyOf(call));
    hooks.delivered?.(call);
  };
  let overflowWarned = false;

  /** The id of a skill: from registration, else from the creator's own skill list (one lookup at a time). */
  const skillIdOf = async (name: string): Promise<string | undefined> => {
    if (!skillIds.has(name) && (missingUntil.get(name) ?? 0) <= Date.now()) {
      lookup ??= client
        .ownSkills()
        .then((skills) => {
          for (const s of skills) if (s.name && s.id) skillIds.set(s.name, s.id);
        })
        .finally(() => (lookup = undefined));
      await lookup;
      // Not among the creator's skills: do not ask again for every call of it.
      if (!skillIds.has(name)) missingUntil.set(name, Date.now() + 60_000);
    }
    return skillIds.get(name);
  };

  const retry = (item: Item, error: unknown) => {
    const { call } = item;
    if (error instanceof RegistryError && !error.retryable) {
      logger.warn('call record refused by the registry; dropped', {
        skill: call.skill,
        transaction: call.transaction,
        error: error.message,
      });
      return finish(call);
    }
    item.attempts++;
    if (item.attempts === maxAttempts && isKept(call)) {
      logger.warn(`call record not delivered after ${item.attempts} attempts; kept, and tried again`, {
        skill: call.skill,
        channel: call.channelId,
        error: errorText(error),
      });
    } else if (item.attempts >= maxAttempts && !isKept(call)) {
      return logger.warn(`call record dropped after ${item.attempts} attempts`, {
        skill: call.skill,
        transaction: call.transaction,
        error: errorText(error),
      });
    }
    const delay = Math.min(maxDelayMs, baseDelayMs * 2 ** (item.attempts - 1)) * (0.8 + Math.random() * 0.4);
    item.nextAt = Date.now() + delay;
    queue.push(item);
  };

  /** The records of `items` whose skill id is known; the others are dropped with a warning. */
  const recordsOf = async (items: Item[]) => {
    const records: { item: Item; body: CallBody }[] = [];
    for (const item of items) {
      const { call } = item;
      const skillId = await skillIdOf(call.skill);
      // Atomic units as signed; a record built by older code carries only the decimal amount.
      const amount = call.amountAtomic === undefined ? { amount: call.amount } : { amountAtomic: call.amountAtomic };
      // The answer's signed receipt goes along: the registry checks it against the listing and the chain.
      const receipt = call.receipt ? { receipt: call.receipt } : {};
      const tier = call.tier === undefined ? {} : { tier: call.tier };
      if (skillId)
        records.push({
          item,
          body:
            call.scheme === 'trial'
              ? { skillId, amountAtomic: '0', kind: 'trial', paymentRef: call.nonce }
              : call.channelId
                ? {
                    skillId,
                    ...amount,
                    channelId: call.channelId,
                    chargedCumulativeAmount: call.chargedCumulativeAmount ?? '0',
                    ...receipt,
                    ...tier,
                  }
                : {
                    skillId,
                    ...amount,
                    paymentRef: call.transaction,
                    ...(call.nonce ? { paymentNonce: call.nonce } : {}),
                    ...receipt,
                    ...tier,
                  },
        });
      else {
        logger.warn('call not tracked: the skill is not registered under this API key', {
          skill: call.skill,
          transaction: call.transaction,
        });
        finish(call);
      }
    }
    return records;
  };

  const send = async (items: Item[]) => {
    let records: { item: Item; body: CallBody }[] = [];
    // Decided when the request goes: a batch answered 404 after another batch already switched
    // the route is sent again one by one too, not dropped.
    const asBatch = route !== 'singles';
    try {
      records = await recordsOf(items);
      if (records.length === 0) return;
      if (!asBatch) {
        while (records.length > 0) {
          await client.recordCall(records[0]!.body);
          finish(records.shift()!.item.call);
        }
        return;
      }
      const { results } = await client.recordCalls(records.map((r) => r.body));
      if (route === 'unknown') route = 'batches';
      results.forEach((outcome, i) => {
        const call = records[i]?.item.call;
        if (!call) return;
        if (outcome.status === 'refused')
          logger.warn('call record refused by the registry; dropped', {
            skill: call.skill,
            transaction: call.transaction,
            error: `${outcome.reason}: ${outcome.message}`,
          });
        finish(call);
      });
    } catch (error) {
      if (asBatch && error instanceof RegistryError && error.status === 404) {
        // A registry of another kind: send these again, one request each.
        route = 'singles';
        for (const item of items) queue.push(item);
        return;
      }
      // Not resolved yet (the skill lookup failed): every item is retried.
      for (const item of records.length > 0 ? records.map((r) => r.item) : items) retry(item, error);
    }
  };

  const pump = () => {
    clearTimeout(timer);
    timer = undefined;
    if (stopped) return;
    const now = Date.now();
    // A full batch of new records goes at once rather than waiting for its delay.
    if (queue.filter((item) => item.nextAt > now && item.attempts === 0).length >= batchSize) {
      for (const item of queue) if (item.attempts === 0) item.nextAt = Math.min(item.nextAt, now);
    }
    const size = route === 'singles' ? 1 : batchSize;
    const lanes = route === 'unknown' ? 1 : concurrency;
    while (inFlight < lanes) {
      const batch: Item[] = [];
      for (let i = 0; i < queue.length && batch.length < size; ) {
        if (queue[i]!.nextAt <= now) batch.push(...queue.splice(i, 1));
        else i++;
      }
      if (batch.length === 0) break;
      // New records still in their delay share the request (records in back-off keep their time).
      for (let i = 0; i < queue.length && batch.length < size; ) {
        if (queue[i]!.attempts === 0) batch.push(...queue.splice(i, 1));
        else i++;
      }
      inFlight++;
      recordsInFlight += batch.length;
      void send(batch).finally(() => {
        inFlight--;
        recordsInFlight -= batch.length;
        pump();
      });
    }
    if (queue.length > 0 && inFlight < lanes) {
      const next = Math.min(...queue.map((item) => item.nextAt));
      timer = setTimeout(pump, Math.max(0, next - now));
      (timer as { unref?: () => void }).unref?.();
    }
    if (queue.length === 0 && inFlight === 0) for (const resolve of idle) resolve();
  };

  return {
    track(call) {
      if (stopped) return;
      if (isKept(call)) {
        if (keptKeys.has(keyOf(call))) return;
        keptKeys.add(keyOf(call));
      }
      if (queue.length >= maxQueue) {
        // The oldest record no one else keeps goes; kept ones wait (their keeper bounds them).
        const index = queue.findIndex((item) => !isKept(item.call));
        if (index >= 0) {
          const [dropped] = queue.splice(index, 1);
          logger.warn('call tracking queue full; oldest record dropped', {
            skill: dropped!.call.skill,
            transaction: dropped!.call.transaction,
          });
        } else if (!overflowWarned) {
          overflowWarned = true;
          logger.warn(`call tracking holds more than ${maxQueue} records; each is kept until the registry has it`);
        }
      }
      queue.push({ call, attempts: 0, nextAt: Date.now() + batchDelayMs });
      pump();
    },
    remember(name, skillId) {
      skillIds.set(name, skillId);
    },
    async flush(timeoutMs) {
      for (const item of queue) item.nextAt = 0;
      pump();
      if (queue.length === 0 && inFlight === 0) return true;
      let done!: () => void;
      const emptied = new Promise<void>((resolve) => {
        done = resolve;
        idle.add(resolve);
      });
      let expiry: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => {
        expiry = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([emptied, expired]);
      clearTimeout(expiry);
      idle.delete(done);
      return queue.length === 0 && inFlight === 0;
    },
    pending: () => queue.length + recordsInFlight,
    stop() {
      stopped = true;
      clearTimeout(timer);
      const kept = queue.filter((item) => isKept(item.call)).length;
      if (queue.length > kept) logger.warn(`call tracking stopped; ${queue.length - kept} record(s) not delivered`);
      if (kept > 0) logger.info(`call tracking stopped; ${kept} channel call record(s) kept for the next start`);
      queue.length = 0;
    },
  };
}
