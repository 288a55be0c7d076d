/**
 * The background pass that finishes what settle could not see: every pending receipt is looked up
 * on chain and its final status recorded (confirmed, reverted, or dropped once it can no longer be
 * mined). Transactions are never re-sent. Safe to run in several instances at once: each final
 * status is recorded by one conditional update.
 */
import type { Address, Hex, PublicClient } from 'viem';
import type { Logger } from '../../../log';
import { multicallOutcome, droppedMulticallOutcome } from './multicall-outcome';
import type { MulticallRow, MulticallStore } from './multicall-store';
import type { MulticallBatcher } from './multicall';
import type { ChainReader } from './chain';
import { REASONS } from './reasons';
import { findReceipt, isKnownTransaction } from '../../receipts';
import type { RelayerPool } from '../../relayer';
import type { AuthorizationRow, Outcome, PaymentStore, PendingReceipt } from './store';
import { unixSeconds, type Clock } from '../../types';
import { safeError } from '../../chain';
import { outcomeOf } from './outcome';

export interface ReconcileReport {
  checked: number;
  confirmed: number;
  reverted: number;
  dropped: number;
  stillPending: number;
  /** Claimed authorizations that expired without ever getting a transaction. */
  abandoned: number;
  /** Authorizations claimed by a process that stopped before sending them (MulticallStore.orphans), sent now. */
  resumed: number;
}

/** A transaction recorded this long before a restart and unknown to the node was never broadcast. */
const RESTART_SEND_MS = 3_000;
/** Longer than any broadcast takes (the RPC client times out at 10 s): unknown by then, never sent. */
const SEND_WINDOW_MS = 30_000;
/** Seconds of validity an authorization needs left to be sent again. */
const RESEND_MARGIN_SECONDS = 10;

export interface Reconciler {
  /** One pass that starts now, or once the running one ends (calls meanwhile share it). */
  runOnce(): Promise<ReconcileReport>;
  start(): void;
  /** Stops the timer and waits for a running pass. */
  stop(): Promise<void>;
}

export interface ReconcilerDeps {
  store: PaymentStore;
  /** Batched settlements, reconciled from their stored transaction hash like single ones. */
  multicalls: MulticallStore;
  /** Sends what a stopped process claimed but never sent. */
  multicallBatcher: Pick<MulticallBatcher, 'resume'>;
  client: PublicClient;
  chain: ChainReader;
  relayers: RelayerPool;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  /** Receipts looked at per pass; default 100. */
  perPass?: number;
  /**
   * Seconds after an authorization's validBefore before an unseen transaction counts as dropped
   * (nodes and clocks disagree a little); default 120.
   */
  dropGraceSeconds?: number;
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { store, client, chain, clock, logger } = deps;
  const perPass = deps.perPass ?? 100;
  const grace = deps.dropGraceSeconds ?? 120;
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<ReconcileReport> | undefined;
  /** What was claimed before this reconciler was made belongs to a process that is gone (or another instance). */
  const startedAt = clock.now();

  /**
   * A transaction the node does not know, recorded by a process gone before this one started (or
   * long enough ago that any send of it has ended), with its authorization still valid: its
   * process stopped between recording and broadcasting it. Sending the authorization again is safe
   * even if it were not so: the token spends an authorization once.
   */
  const neverBroadcast = (row: PendingReceipt, now: number) => {
    const age = clock.now().getTime() - row.submittedAt.getTime();
    const gone = (row.submittedAt < startedAt && age > RESTART_SEND_MS) || age > SEND_WINDOW_MS;
    return gone && BigInt(row.validBefore) > BigInt(now + RESEND_MARGIN_SECONDS);
  };

  async function inspect(row: PendingReceipt, now: number): Promise<Outcome | 'unsent' | undefined> {
    const hash = row.txHash as Hex;
    const receipt = await findReceipt(client, hash);
    if (receipt) {
      const outcome = outcomeOf(receipt, {
        asset: row.asset as Address,
        from: row.payer as Address,
        to: row.payee as Address,
        value: BigInt(row.amount),
      });
      // A revert because another transaction used the authorization first is no fault of the payer's.
      if (
        outcome.status === 'reverted' &&
        outcome.authorization &&
        (await chain.authorizationUsed(row.asset as Address, row.payer as Address, row.nonce as Hex))
      ) {
        outcome.authorization.reason = REASONS.nonceAlreadyUsed;
      }
      return outcome;
    }
    if (await isKnownTransaction(client, hash)) return undefined; // still waiting in a mempool
    if (neverBroadcast(row, now)) return 'unsent';
    if (BigInt(now) <= BigInt(row.validBefore) + BigInt(grace)) return undefined; // may still be mined
    const used = await chain.authorizationUsed(row.asset as Address, row.payer as Address, row.nonce as Hex);
    return used
      ? { status: 'dropped', error: 'Never mined; another transaction used the authorization', authorization: { state: 'settled' } }
      : {
          status: 'dropped',
          error: 'Never mined before the authorization expired',
          authorization: { state: 'failed', reason: REASONS.transactionDropped },
        };
  }

  /**
   * The outcome of a pending batch transaction, member by member; undefined while it may still be
   * mined; 'unsent' for a batch its process recorded and stopped before broadcasting (the rule of
   * {@link neverBroadcast}, for the batch), with a member still valid to send again.
   */
  async function inspectMulticall(batch: MulticallRow, now: number) {
    const hash = batch.txHash as Hex;
    const receipt = await findReceipt(client, hash);
    const members = await deps.multicalls.members(hash);
    if (receipt) return multicallOutcome(chain, receipt, members);
    if (await isKnownTransaction(client, hash)) return undefined;
    const age = clock.now().getTime() - batch.submittedAt.getTime();
    const gone = (batch.submittedAt < startedAt && age > RESTART_SEND_MS) || age > SEND_WINDOW_MS;
    if (gone && members.some((m) => BigInt(m.validBefore) > BigInt(now + RESEND_MARGIN_SECONDS))) return 'unsent' as const;
    const lastValid = members.reduce((latest, m) => (BigInt(m.validBefore) > latest ? BigInt(m.validBefore) : latest), 0n);
    if (BigInt(now) <= lastValid + BigInt(grace)) return undefined;
    return droppedMulticallOutcome(chain, members);
  }

  async function multicallPass(report: ReconcileReport, now: number, unsent: (AuthorizationRow & { batchCall: string })[]): Promise<void> {
    for (const batch of await deps.multicalls.pending(perPass)) {
      report.checked++;
      try {
        const outcome = await inspectMulticall(batch, now);
        if (!outcome) {
          report.stillPending++;
          continue;
        }
        if (outcome === 'unsent') {
          // Its members are free again (an expired one the next pass abandons) and sent at once.
          const members = await deps.multicalls.members(batch.txHash);
          await deps.multicalls.release(batch.txHash as Hex, 'The node never got this batch; its members are sent again', clock.now());
          deps.relayers.byAddress(batch.relayer)?.resync();
          for (const m of members)
            if (m.batchCall && BigInt(m.validBefore) > BigInt(now + RESEND_MARGIN_SECONDS))
              unsent.push({ ...m, txHash: null, batchCall: m.batchCall });
          continue;
        }
        if (await deps.multicalls.finalize(batch.txHash as Hex, outcome, clock.now())) {
          report[outcome.status]++;
          const settled = outcome.members.filter((m) => m.state === 'settled').length;
          logger.info('settlement batch reconciled', { tx: batch.txHash, status: outcome.status, size: batch.size, settled });
        }
        if (outcome.status === 'dropped') deps.relayers.byAddress(batch.relayer)?.resync();
      } catch (error) {
        report.stillPending++;
        logger.warn('reconcile failed for a batch', { tx: batch.txHash, error: safeError(error) });
      }
    }
  }

  async function pass(): Promise<ReconcileReport> {
    const report: ReconcileReport = { checked: 0, confirmed: 0, reverted: 0, dropped: 0, stillPending: 0, abandoned: 0, resumed: 0 };
    const now = unixSeconds(clock);
    report.abandoned = await store.abandonExpired(now - grace, REASONS.unexpectedSettleError, clock.now());
    const unsent: (AuthorizationRow & { batchCall: string })[] = [];
    for (const row of await store.pending(perPass)) {
      report.checked++;
      try {
        const outcome = await inspect(row, now);
        if (!outcome) {
          report.stillPending++;
          continue;
        }
        if (outcome === 'unsent') {
          const released = await store.release(
            row.txHash as Hex,
            'The node never got this transaction; its authorization is sent again',
            clock.now(),
          );
          deps.relayers.byAddress(row.relayer)?.resync();
          if (released) unsent.push(released);
          continue;
        }
        if (await store.finalize(row.txHash as Hex, outcome, clock.now())) {
          report[outcome.status]++;
          logger.info('settlement reconciled', { tx: row.txHash, status: outcome.status, payer: row.payer, amount: row.amount });
        }
        // A dropped transaction leaves a nonce gap: let its lane re-read the nonce.
        if (outcome.status === 'dropped') deps.relayers.byAddress(row.relayer)?.resync();
      } catch (error) {
        report.stillPending++;
        logger.warn('reconcile failed for a receipt', { tx: row.txHash, error: safeError(error) });
      }
    }
    await multicallPass(report, now, unsent);
    const orphans = [...unsent, ...(await deps.multicalls.orphans(clock.now(), startedAt, perPass))];
    if (orphans.length > 0) {
      report.resumed = orphans.length;
      logger.warn('sending authorizations a stopped process claimed but never sent', { count: orphans.length });
      await deps.multicallBatcher.resume(orphans);
    }
    return report;
  }

  /** A pass that starts after the call: one already running is waited for, and callers meanwhile share the next. */
  let next: Promise<ReconcileReport> | undefined;
  const runOnce = (): Promise<ReconcileReport> => {
    if (running) {
      next ??= running
        .catch(() => undefined)
        .then(() => {
          next = undefined;
          return runOnce();
        });
      return next;
    }
    running = pass().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    runOnce,
    start() {
      if (timer) return;
      // At once: a restart resumes what its predecessor left within seconds, not a period later.
      runOnce().catch((error: unknown) => logger.error('reconcile pass failed', { error: safeError(error) }));
      timer = setInterval(() => {
        runOnce().catch((error: unknown) => logger.error('reconcile pass failed', { error: safeError(error) }));
      }, deps.intervalMs);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
  };
}
