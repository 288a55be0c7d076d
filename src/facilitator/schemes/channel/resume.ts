/**
 * The pass that finishes channel operations a settle could not: at start (and then periodically),
 * each operation not final is looked up. Mined: its outcome is recorded. Still in a mempool: left
 * alone. Recorded but never broadcast by a process that stopped (state `queued`, or `sent` with a
 * transaction the node does not know), it is sent now, from its stored calldata. Several instances
 * may run it at once: a send first records its hash with a conditional update (only one wins).
 */
import type { Hex, PublicClient } from 'viem';
import type { Logger } from '../../../log';
import { findReceipt, isKnownTransaction } from '../../receipts';
import type { RelayerPool } from '../../relayer';
import type { Clock } from '../../types';
import type { ChannelSender } from './sender';
import type { ChannelStore, OperationRow } from './store';
import { safeError } from '../../chain';

/** An operation recorded this long before a restart, and not on chain, was never broadcast. */
const RESTART_SEND_MS = 3_000;
/** Longer than any broadcast takes: an operation still unsent then was abandoned. */
const SEND_WINDOW_MS = 30_000;

export interface ResumeReport {
  checked: number;
  confirmed: number;
  reverted: number;
  /** Operations a stopped process recorded but never broadcast, sent now. */
  resumed: number;
  stillPending: number;
}

export interface ChannelResumeDeps {
  store: ChannelStore;
  sender: ChannelSender;
  client: PublicClient;
  relayers: RelayerPool;
  clock: Clock;
  logger: Logger;
  /** When this process started: what was recorded before belongs to a process that is gone (or another instance). */
  startedAt: Date;
  batchSize?: number;
}

export function createChannelResume(deps: ChannelResumeDeps) {
  const { store, sender, client, clock, logger } = deps;

  const abandoned = (row: OperationRow) => {
    const age = clock.now().getTime() - row.updatedAt.getTime();
    return (row.updatedAt < deps.startedAt && age > RESTART_SEND_MS) || age > SEND_WINDOW_MS;
  };

  const resend = async (row: OperationRow, report: ResumeReport) => {
    report.resumed++;
    logger.warn('sending a channel operation a stopped process recorded but never broadcast', { operation: row.kind, id: row.id });
    const outcome = await sender.send(row);
    if (outcome.type === 'confirmed') report.confirmed++;
    else if (outcome.type === 'reverted') report.reverted++;
  };

  return {
    async runOnce(): Promise<ResumeReport> {
      const report: ResumeReport = { checked: 0, confirmed: 0, reverted: 0, resumed: 0, stillPending: 0 };
      for (const row of await store.open(clock.now(), deps.batchSize ?? 100)) {
        report.checked++;
        try {
          if (row.state === 'queued') {
            if (abandoned(row)) await resend(row, report);
            else report.stillPending++;
            continue;
          }
          const hash = row.txHash as Hex;
          const receipt = await findReceipt(client, hash);
          if (receipt) {
            if (await sender.recordMined(row, receipt)) report[receipt.status === 'success' ? 'confirmed' : 'reverted']++;
            continue;
          }
          if ((await isKnownTransaction(client, hash)) || !abandoned(row)) {
            report.stillPending++;
            continue;
          }
          // The node never got it: free the operation (one instance wins) and send it anew.
          deps.relayers.byAddress(row.relayer ?? '')?.resync();
          if (await store.release(row.id, hash, 'The node never got this transaction; sent again', clock.now())) {
            const fresh = await store.byKey(row.key);
            if (fresh?.state === 'queued') await resend(fresh, report);
          }
        } catch (error) {
          report.stillPending++;
          logger.warn('resuming a channel operation failed', { id: row.id, error: safeError(error) });
        }
      }
      return report;
    },
  };
}
