/**
 * Sends a recorded channel operation through a relayer lane (gas sponsored by the facilitator):
 * the signed transaction's hash is stored before the broadcast (store.recordSent), a refusal by the
 * node frees the operation for a retry with a fresh nonce, and the receipt is awaited for a bounded
 * time. What is not seen in time, or was never broadcast because the process stopped, the resume
 * pass finishes. An operation is never sent twice while a transaction of it may still be mined.
 */
import { BaseError, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import type { Logger } from '../../../log';
import { waitForReceipt } from '../../receipts';
import { type RelayerPool, MAX_SEND_ATTEMPTS, AlreadySent } from '../../relayer';
import type { Clock } from '../../types';
import type { ChannelStore, OperationRow } from './store';
import { revertText, safeError } from '../../chain';

export type SendOutcome =
  | { type: 'confirmed'; hash: Hex; receipt: TransactionReceipt }
  | { type: 'reverted'; hash: Hex; message: string }
  /** Nothing is out: the node refused it, or it could not be signed. */
  | { type: 'failed'; message: string }
  /** Sent (or sent by another instance), outcome not seen in time: the resume pass records it. */
  | { type: 'pending'; hash: Hex | undefined };

export interface ChannelSenderDeps {
  store: ChannelStore;
  client: PublicClient;
  relayers: RelayerPool;
  clock: Clock;
  logger: Logger;
  receiptTimeoutMs: number;
  pollIntervalMs: number;
  stopping: AbortSignal;
}

/** Headroom over an estimate: state may shift between the estimate and mining. */
const withHeadroom = (gas: bigint) => (gas * 12n) / 10n + 20_000n;

export type ChannelSender = ReturnType<typeof createChannelSender>;

export function createChannelSender(deps: ChannelSenderDeps) {
  const { store, client, clock, logger } = deps;

  /** Gas for `row`'s call from the relayer that will send it, or the revert text. */
  const estimate = async (row: Pick<OperationRow, 'target' | 'callData'>, from: Hex): Promise<bigint | string> => {
    try {
      return withHeadroom(await client.estimateGas({ account: from, to: row.target as Hex, data: row.callData as Hex }));
    } catch (error) {
      if (error instanceof BaseError && /revert/i.test(`${error.shortMessage} ${error.details}`)) return revertText(error);
      throw error;
    }
  };

  /** Waits (bounded) for the receipt of `hash` and records the outcome. */
  const settle = async (row: OperationRow, hash: Hex): Promise<SendOutcome> => {
    const receipt = await waitForReceipt(client, hash, deps.receiptTimeoutMs, deps.pollIntervalMs, deps.stopping);
    if (!receipt) return { type: 'pending', hash };
    const outcome = finalOf(receipt);
    await store.finalize(row.id, outcome, clock.now());
    return receipt.status === 'success'
      ? { type: 'confirmed', hash, receipt }
      : { type: 'reverted', hash, message: outcome.error ?? 'The transaction reverted' };
  };

  return {
    estimate,

    /** Sends `row` (state `queued`) with `gas` (estimated here when absent) and answers its outcome. */
    async send(row: OperationRow, gas?: bigint): Promise<SendOutcome> {
      const log = logger.child({ operation: row.kind, key: row.key.slice(0, 80) });
      for (let attempt = 1; ; attempt++) {
        const relayer = deps.relayers.pick();
        let sent: { hash: Hex } | undefined;
        try {
          const limit = gas ?? (await estimate(row, relayer.address));
          if (typeof limit === 'string') {
            await store.finalize(row.id, { state: 'failed', error: limit }, clock.now());
            return { type: 'failed', message: limit };
          }
          const result = await relayer.send({ to: row.target as Hex, data: row.callData as Hex, gas: limit }, (hash, nonce) =>
            store.recordSent(row.id, hash, relayer.address, nonce, clock.now()),
          );
          if (result.type === 'rejected') {
            const error = revertText(result.error);
            const retry = result.retryable && attempt < MAX_SEND_ATTEMPTS;
            if (retry) await store.release(row.id, result.hash, error, clock.now());
            else await store.finalize(row.id, { state: 'failed', error }, clock.now());
            log.warn('relayer transaction refused', { tx: result.hash, relayer: relayer.address, error, retry });
            if (retry) continue;
            return { type: 'failed', message: `The node refused the transaction: ${error}` };
          }
          if (result.type === 'unknown') log.warn('relayer broadcast unconfirmed', { tx: result.hash, error: revertText(result.error) });
          sent = { hash: result.hash };
        } catch (error) {
          if (error instanceof AlreadySent) {
            log.warn('channel operation already sent by another instance');
            const current = await store.byKey(row.key);
            return { type: 'pending', hash: (current?.txHash ?? undefined) as Hex | undefined };
          }
          log.error('channel operation failed before broadcast', { error: safeError(error) });
          await store.finalize(row.id, { state: 'failed', error: 'could not be submitted' }, clock.now()).catch(() => undefined);
          return { type: 'failed', message: 'The transaction could not be submitted' };
        }
        log.debug('channel operation broadcast', { tx: sent.hash });
        try {
          return await settle(row, sent.hash);
        } catch (error) {
          log.error('channel operation outcome not recorded', { tx: sent.hash, error: safeError(error) });
          return { type: 'pending', hash: sent.hash };
        }
      }
    },

    /** The outcome of `row`'s stored transaction when it is mined, recorded; undefined while not. */
    async recordMined(row: OperationRow, receipt: TransactionReceipt): Promise<boolean> {
      return store.finalize(row.id, finalOf(receipt), clock.now());
    },
  };
}

function finalOf(receipt: TransactionReceipt) {
  return receipt.status === 'success'
    ? { state: 'confirmed' as const, blockNumber: Number(receipt.blockNumber) }
    : { state: 'reverted' as const, blockNumber: Number(receipt.blockNumber), error: 'The transaction reverted' };
}
