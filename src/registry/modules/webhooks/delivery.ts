/**
 * Sending stored deliveries (Standard Webhooks): a due delivery is taken with a lease (one
 * conditional update, under an advisory lock, so several registry instances never send one at
 * once), POSTed with `webhook-id`, `webhook-timestamp` and `webhook-signature` (the endpoint's
 * secret), and its attempt logged. A 2xx delivers it; anything else is tried again after the
 * next pause of {@link RETRY_SCHEDULE_SECONDS} (about 27 hours in all), then it fails for good.
 * An endpoint whose deliveries fail for good {@link DISABLE_AFTER} times in a row is turned off,
 * with the reason shown to its owner. A registry stopped mid-send sends again after the lease
 * (the attempt's timeout and its margin, `leaseMarginMs`), with the same `webhook-id` (at least once,
 * as the convention allows). Deliveries of one endpoint that share an ordering key (events.ts)
 * go one at a time, in the order they were stored.
 *
 * A receiver cannot hold the registry up: of its answer only the first {@link READ_LIMIT_BYTES}
 * are read (the rest is dropped, the connection closed), an attempt ends at its timeout, and
 * attempts run side by side without waiting for each other, at most {@link DELIVERY_LIMITS} at
 * once in an instance, to one account and to one endpoint (the last two counted across instances
 * by their leases), each free place going first to the accounts with the fewest in flight. The
 * hanging endpoints of a few accounts so hold a few places, and other accounts' deliveries go on.
 *
 * Outside a local marketplace, the receiver's host is resolved, refused when it is not a public
 * address, and the request goes to the address checked (the SSRF guard of the health prober).
 */
import { and, eq, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../../../db';
import { resultRows } from '../../../db/rows';
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../../db/schema';
import { WEBHOOK_DEFAULTS } from '../../../config';
import type { Logger } from '../../../log';
import type { Clock } from '../../context';
import { checkHost, pinnedTarget, resolveWithDns, type PinnedTarget, type Resolve } from '../../../net';

/** Pauses before the 2nd, 3rd, … attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;
/** Deliveries failed for good in a row that turn an endpoint off. */
export const DISABLE_AFTER = 5;
const EXCERPT_CHARS = 200;
/** The most of a receiver's answer read (for the excerpt); the rest is never read. */
export const READ_LIMIT_BYTES = 4096;
/** The advisory lock that takes deliveries one instance at a time (an arbitrary constant, as MIGRATION_LOCK_KEY). */
const TAKE_LOCK_KEY = 7_202_611_330;

/**
 * How many attempts run at once: `total` in this instance, `perAccount` to the endpoints of one
 * account and `perEndpoint` to one endpoint, in all instances (by their leases).
 */
export const DELIVERY_LIMITS = { total: 100, perAccount: 10, perEndpoint: 4 } as const;

export interface WebhookDelivererDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  /** Send to loopback and private addresses (a local marketplace, tests). */
  allowPrivateAddresses: boolean;
  fetch?: typeof fetch;
  resolve?: Resolve;
  /** Per attempt, the answer's first bytes included; default 5000 ms. */
  timeoutMs?: number;
  /** A taken delivery stays taken this long past its attempt's timeout; default 10 000 ms. */
  leaseMarginMs?: number;
  /** Told each attempt's verdict once it is recorded (the metrics count them). */
  onVerdict?: (verdict: Verdict) => void;
  /** Between background takes; default 500 ms (another take follows each attempt that ends). */
  intervalMs?: number;
}

export interface DeliveryRound {
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
}

export type Verdict = 'delivered' | 'retrying' | 'failed';

interface Due {
  id: string;
  event_id: string;
  payload: unknown;
  attempts: number;
  endpoint_id: string;
  url: string;
  secret: string;
}

/**
 * The start of an answer's body as text: at most {@link READ_LIMIT_BYTES} read, then the body
 * dropped and the request ended (`stop`), so a receiver answering gigabytes costs a few kilobytes.
 */
async function excerptOf(res: Response, stop: AbortController): Promise<string> {
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (reader && size < READ_LIMIT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = READ_LIMIT_BYTES - size;
      chunks.push(value.byteLength > room ? value.subarray(0, room) : value);
      size += Math.min(value.byteLength, room);
    }
  } catch {
    // what came before the failure is the excerpt
  } finally {
    await reader?.cancel().catch(() => undefined);
    stop.abort();
  }
  return new TextDecoder().decode(Buffer.concat(chunks)).slice(0, EXCERPT_CHARS);
}

export function createWebhookDeliverer(deps: WebhookDelivererDeps) {
  const { db, clock, logger } = deps;
  const send = deps.fetch ?? fetch;
  const resolve = deps.resolve ?? resolveWithDns;
  const timeoutMs = deps.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs;
  const leaseMarginMs = deps.leaseMarginMs ?? WEBHOOK_DEFAULTS.leaseMarginMs;
  const limits = DELIVERY_LIMITS;
  let timer: ReturnType<typeof setInterval> | undefined;
  /** Attempts under way in this instance. */
  const inFlight = new Set<Promise<unknown>>();
  /** The last take: takes run one after another, each knowing the places the one before filled. */
  let taking: Promise<unknown> = Promise.resolve();

  /**
   * Up to `limit` due deliveries, leased: per endpoint and per account only as many as their
   * places left (in flight anywhere: a live lease), the places given round by round across
   * accounts (each account's first, then each one's second, …), oldest due first within a round.
   */
  async function take(now: Date, limit: number): Promise<Due[]> {
    if (limit <= 0) return [];
    const lease = new Date(now.getTime() + timeoutMs + leaseMarginMs).toISOString();
    const at = now.toISOString();
    return db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${TAKE_LOCK_KEY})`);
      const result = await tx.execute(sql`
        with busy as (
          select b.endpoint_id, be.user_id from webhook_deliveries b
          join webhook_endpoints be on be.id = b.endpoint_id
          where b.status = 'pending' and b.locked_until > ${at}::timestamptz
        ), due as (
          select w.id, w.next_attempt_at, w.seq, e.user_id,
            row_number() over (partition by w.endpoint_id order by w.next_attempt_at, w.seq)
              + (select count(*) from busy where busy.endpoint_id = w.endpoint_id) as endpoint_place
          from webhook_deliveries w
          join webhook_endpoints e on e.id = w.endpoint_id
          where w.status = 'pending' and w.next_attempt_at <= ${at}::timestamptz
            and (w.locked_until is null or w.locked_until <= ${at}::timestamptz)
            and not (w.ordering_key is not null and exists (
              select 1 from webhook_deliveries earlier
              where earlier.endpoint_id = w.endpoint_id and earlier.ordering_key = w.ordering_key
                and earlier.status = 'pending' and earlier.seq < w.seq))
        ), placed as (
          select id, next_attempt_at, seq,
            row_number() over (partition by user_id order by endpoint_place, next_attempt_at, seq)
              + (select count(*) from busy where busy.user_id = due.user_id) as account_place
          from due where endpoint_place <= ${limits.perEndpoint}
        ), chosen as (
          select id from placed where account_place <= ${limits.perAccount}
          order by account_place, next_attempt_at, seq limit ${limit}
        )
        update webhook_deliveries d set locked_until = ${lease}::timestamptz, updated_at = ${at}::timestamptz
        from webhook_endpoints e
        where e.id = d.endpoint_id and d.id in (select id from chosen)
        returning d.id, d.event_id, d.payload, d.attempts, d.endpoint_id, e.url, e.secret`);
      return resultRows<Due>(result);
    });
  }

  /** POSTs one delivery; the HTTP status (null when no answer came), latency and an excerpt. */
  async function post(due: Due, body: string, now: Date): Promise<{ status: number | null; latencyMs: number | null; excerpt: string }> {
    const url = new URL(due.url);
    const deadline = AbortSignal.timeout(timeoutMs);
    const stop = new AbortController();
    let target: PinnedTarget = { url, headers: {} };
    if (!deps.allowPrivateAddresses) {
      const host = await checkHost(url.hostname, resolve);
      if (host.type !== 'public') return { status: null, latencyMs: null, excerpt: host.reason };
      target = pinnedTarget(url, host.address);
    }
    const signature = new Webhook(due.secret).sign(due.event_id, now, body);
    const started = performance.now();
    try {
      const res = await send(target.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.any([deadline, stop.signal]),
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'skill-market-webhooks',
          'webhook-id': due.event_id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
          ...target.headers,
        },
        ...(target.tls ? { tls: target.tls } : {}),
      });
      const excerpt = await excerptOf(res, stop);
      return { status: res.status, latencyMs: Math.round(performance.now() - started), excerpt };
    } catch (error) {
      stop.abort();
      const reason = deadline.aborted ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error);
      return { status: null, latencyMs: null, excerpt: reason.slice(0, EXCERPT_CHARS) };
    }
  }

  async function attempt(due: Due): Promise<Verdict> {
    const now = clock.now();
    const outcome = await post(due, JSON.stringify(due.payload), now);
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const attempts = due.attempts + 1;
    const pause = RETRY_SCHEDULE_SECONDS[attempts - 1];
    const verdict = ok ? 'delivered' : pause === undefined ? 'failed' : 'retrying';
    await db.transaction(async (tx) => {
      await tx.insert(webhookAttempts).values({ deliveryId: due.id, at: now, ...outcome });
      await tx
        .update(webhookDeliveries)
        .set({
          attempts,
          status: verdict === 'retrying' ? 'pending' : verdict,
          lockedUntil: null,
          updatedAt: now,
          ...(verdict === 'retrying' ? { nextAttemptAt: new Date(now.getTime() + (pause ?? 0) * 1000) } : {}),
          ...(verdict === 'delivered' ? { deliveredAt: now } : {}),
        })
        .where(eq(webhookDeliveries.id, due.id));
      if (verdict === 'delivered') {
        await tx.update(webhookEndpoints).set({ failedInRow: 0 }).where(eq(webhookEndpoints.id, due.endpoint_id));
      } else if (verdict === 'failed') {
        await tx
          .update(webhookEndpoints)
          .set({
            failedInRow: sql`${webhookEndpoints.failedInRow} + 1`,
            enabled: sql`${webhookEndpoints.failedInRow} + 1 < ${DISABLE_AFTER}`,
            disabledReason: sql`case when ${webhookEndpoints.failedInRow} + 1 >= ${DISABLE_AFTER}
              then ${`Turned off: ${DISABLE_AFTER} deliveries in a row failed after every retry (last: ${outcome.status ?? outcome.excerpt})`}
              else ${webhookEndpoints.disabledReason} end`,
            updatedAt: now,
          })
          .where(and(eq(webhookEndpoints.id, due.endpoint_id)));
      }
    });
    if (!ok) logger.info('webhook delivery failed', { endpoint: due.endpoint_id, attempt: attempts, status: outcome.status, verdict });
    deps.onVerdict?.(verdict);
    return verdict;
  }

  /**
   * Takes what is due for up to `limit` free places of this instance and starts its attempts,
   * without waiting for them: the attempts, each ending in its verdict.
   */
  function launch(limit: number): Promise<Promise<Verdict>[]> {
    const launched = taking.then(async () => {
      const due = await take(clock.now(), Math.min(limit, limits.total - inFlight.size));
      return due.map((d) => {
        const running = attempt(d);
        // Its place is free once it ended: the background takes again (the endpoint's next one may be due).
        const settled = running.then(pump, (error: unknown) => {
          logger.warn('webhook delivery attempt failed', { endpoint: d.endpoint_id, error: String(error) });
          pump();
        });
        inFlight.add(settled);
        void settled.finally(() => inFlight.delete(settled));
        return running;
      });
    });
    taking = launched.catch(() => undefined);
    return launched;
  }

  /** Background takes, one at a time: another right after when asked while one runs. */
  let pumping = false;
  let again = false;
  function pump(): void {
    if (!timer) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    launch(limits.total)
      .catch((error: unknown) => logger.warn('webhook delivery round failed', { error: String(error) }))
      .finally(() => {
        pumping = false;
        if (again) {
          again = false;
          pump();
        }
      });
  }
  /** What is due now (up to `limit`) attempted once, side by side; resolves when those attempts ended. */
  async function deliverDue(limit = 50): Promise<DeliveryRound> {
    const verdicts = await Promise.all(await launch(limit));
    return {
      attempted: verdicts.length,
      delivered: verdicts.filter((v) => v === 'delivered').length,
      retrying: verdicts.filter((v) => v === 'retrying').length,
      failed: verdicts.filter((v) => v === 'failed').length,
    };
  }

  return {
    deliverDue,
    /** Takes in the background every `intervalMs`, and again whenever an attempt ends. */
    start() {
      if (timer) return;
      timer = setInterval(pump, deps.intervalMs ?? 500);
      timer.unref?.();
    },
    /** No more takes; resolves once the attempts under way ended. */
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await taking;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
