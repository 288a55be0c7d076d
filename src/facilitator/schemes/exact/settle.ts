/**
 * Settlement of a claimed authorization: a gas limit (a fixed bound when verify already simulated
 * this very transfer, else an estimate, which simulates it), store the receipt, broadcast through
 * a relayer lane, then:
 * - `confirmed`: wait a bounded time for the receipt. A transfer sent but not yet seen answers
 *   `settlement_pending` with its hash; the reconciler records its final status later.
 * - `broadcast`: answer success with the hash once the node accepted the transaction, provided the
 *   payer's balance minus their other unconfirmed settlements covers this one (else it waits as
 *   `confirmed`). The receipt is awaited in the background (the reconciler after a restart); a
 *   revert is recorded as a reverted receipt against the payer, who is refused for a while.
 * Nothing is ever sent twice.
 */
import type { Hex, PublicClient } from 'viem';
import type { SettleResponse, SettlementMode } from 'skill-market/x402';
import type { Logger } from '../../../log';
import { transferCall, type ChainReader } from './chain';
import { REASONS } from './reasons';
import { waitForReceipt, type ReceiptWatcher } from '../../receipts';
import { AlreadySent, MAX_SEND_ATTEMPTS, type RelayerPool, type SendResult } from '../../relayer';
import type { PaymentRequest } from './request';
import type { AuthorizationRow, PaymentStore } from './store';
import type { Clock } from '../../types';
import { revertText, safeError, type Rejection } from '../../chain';
import { outcomeOf } from './outcome';

export interface SettleContext {
  store: PaymentStore;
  chain: ChainReader;
  client: PublicClient;
  relayers: RelayerPool;
  clock: Clock;
  logger: Logger;
  receiptTimeoutMs: number;
  pollIntervalMs: number;
  /** Runs a task after the answer (a broadcast settlement's receipt wait); stop() waits for them. */
  background(task: () => Promise<unknown>): void;
  /** Aborted when the facilitator stops: background waits end, the reconciler takes over. */
  stopping: AbortSignal;
  /** The background receipt waits of broadcast settlements, sharing one poller. */
  receipts: ReceiptWatcher;
}

/** How a claimed authorization is to be settled. */
export interface SettleOptions {
  mode: SettlementMode;
  /** Verify simulated exactly this transfer (same payload, ECDSA): no estimate needed. */
  simulated: boolean;
  /** The payer's other unconfirmed amount of this asset when it was claimed. */
  unconfirmedOthers: bigint;
  /** The payer's balance read alongside the claim (broadcast mode), if it could be read. */
  balance: bigint | undefined;
}

/**
 * Gas limit of a transfer verify simulated: FiatToken's ECDSA transferWithAuthorization takes
 * 69-86k (a new payee costs the most); the bound leaves room for proxies and blocklist checks.
 * A transfer that still runs out reverts and is recorded as failed, as any revert.
 */
export const SIMULATED_TRANSFER_GAS = 150_000n;

/** How long a broadcast settlement's receipt is awaited in the background before the reconciler's turn. */
export const BACKGROUND_RECEIPT_TIMEOUT_MS = 120_000;

export function settleFailure(
  request: Pick<PaymentRequest, 'network'> & { payer?: PaymentRequest['payer'] },
  rejection: Rejection,
  transaction = '',
): SettleResponse {
  const response: SettleResponse = {
    success: false,
    errorReason: rejection.reason,
    errorMessage: rejection.message,
    transaction,
    network: request.network,
  };
  if (request.payer !== undefined) response.payer = request.payer;
  return response;
}

/**
 * The mode a settlement really answers in. Exposure bound: answer before the receipt only what
 * the payer's balance covers besides their unconfirmed settlements.
 */
export function answerMode(options: SettleOptions, value: string): SettlementMode {
  const covered = options.balance !== undefined && options.balance - options.unconfirmedOthers >= BigInt(value);
  return options.mode === 'broadcast' && covered ? 'broadcast' : 'confirmed';
}

/** Submits the transfer of `claimed` (state `settling`) and answers with its outcome. */
export async function submitSettlement(
  ctx: SettleContext,
  request: PaymentRequest,
  claimed: AuthorizationRow,
  options: SettleOptions,
): Promise<SettleResponse> {
  const { store, clock, logger } = ctx;
  const call = transferCall(request, claimed.signerKind);
  const a = request.payment.authorization;
  const log = logger.child({ payer: request.payer, payee: a.to, amount: a.value, network: request.requirements.network });
  const mode = answerMode(options, a.value);
  if (options.mode === 'broadcast' && mode === 'confirmed') log.debug('broadcast not covered by the balance; waiting for the receipt');

  for (let attempt = 1; ; attempt++) {
    let sent: Extract<SendResult, { type: 'sent' | 'unknown' }>;
    try {
      const relayer = ctx.relayers.pick();
      let gas = SIMULATED_TRANSFER_GAS;
      if (!options.simulated || claimed.signerKind !== 'ecdsa') {
        const estimate = await ctx.chain.estimateGas(call, relayer.address, request);
        if ('reason' in estimate) {
          await store.fail(claimed.id, estimate.reason, clock.now());
          return settleFailure(request, estimate);
        }
        gas = (estimate.gas * 12n) / 10n + 10_000n; // headroom: state may shift between estimate and mining
      }
      const result = await relayer.send({ ...call, gas }, (hash, nonce) =>
        store.recordSubmission({ authorization: claimed, txHash: hash, relayer: relayer.address, relayerNonce: nonce }, clock.now()),
      );
      if (result.type === 'rejected') {
        const error = revertText(result.error);
        const retry = result.retryable && attempt < MAX_SEND_ATTEMPTS;
        // Refused: nothing is out. Retried, the authorization is freed for the next transaction.
        if (retry) await store.release(result.hash, error, clock.now());
        else
          await store.finalize(
            result.hash,
            { status: 'dropped', error, authorization: { state: 'failed', reason: REASONS.transactionFailed } },
            clock.now(),
          );
        log.warn('relayer transaction refused', { tx: result.hash, relayer: relayer.address, error, retry });
        if (retry) continue;
        return settleFailure(request, { reason: REASONS.transactionFailed, message: `The node refused the transaction: ${error}` });
      }
      sent = result;
      if (result.type === 'unknown') log.warn('relayer broadcast unconfirmed', { tx: result.hash, error: revertText(result.error) });
    } catch (error) {
      if (error instanceof AlreadySent) {
        // Another instance's reconciler sent it (this process was taken for stopped): its transaction decides.
        log.warn('authorization already sent by another instance');
        return settleFailure(request, {
          reason: REASONS.settlementPending,
          message: 'Sent by another instance; ask GET /settlements for the outcome',
        });
      }
      // Nothing was broadcast: the claim ends here and the payer must sign anew.
      log.error('settlement failed before broadcast', { error: safeError(error) });
      await store.fail(claimed.id, REASONS.unexpectedSettleError, clock.now()).catch(() => undefined);
      return settleFailure(request, { reason: REASONS.unexpectedSettleError, message: 'The settlement could not be submitted' });
    }
    if (mode === 'broadcast' && sent.type === 'sent') {
      const hash = sent.hash;
      ctx.background(() => awaitOutcome(ctx, request, hash, BACKGROUND_RECEIPT_TIMEOUT_MS, true));
      log.debug('payment broadcast', { tx: hash });
      return { success: true, transaction: hash, network: request.network, payer: request.payer };
    }
    return awaitOutcome(ctx, request, sent.hash, ctx.receiptTimeoutMs, false);
  }
}

/** Waits (bounded) for the receipt of a broadcast transfer and records what it shows. */
async function awaitOutcome(
  ctx: SettleContext,
  request: PaymentRequest,
  hash: Hex,
  timeoutMs: number,
  answered: boolean,
): Promise<SettleResponse> {
  const a = request.payment.authorization;
  const pending = settleFailure(request, { reason: REASONS.settlementPending, message: 'Sent; the receipt was not seen in time' }, hash);
  try {
    const receipt = answered
      ? await ctx.receipts.wait(hash, timeoutMs)
      : await waitForReceipt(ctx.client, hash, timeoutMs, ctx.pollIntervalMs, ctx.stopping);
    if (!receipt) return pending;
    const outcome = outcomeOf(receipt, { asset: request.requirements.asset, from: request.payer, to: a.to, value: BigInt(a.value) });
    if (outcome.status === 'reverted' && outcome.authorization) {
      // Name the cause when the chain shows it (balance moved away, authorization used elsewhere).
      const cause = await ctx.chain.explainRevert(request).catch(() => undefined);
      if (cause && cause.reason !== REASONS.transactionFailed) {
        outcome.authorization.reason = cause.reason;
        outcome.error = `The transaction reverted: ${cause.message}`.slice(0, 300);
      }
    }
    await ctx.store.finalize(hash, outcome, ctx.clock.now());
    if (answered && outcome.authorization?.state === 'failed') {
      ctx.logger.warn('a broadcast settlement failed after its answer', {
        tx: hash,
        payer: request.payer,
        payee: a.to,
        amount: a.value,
        reason: outcome.authorization.reason,
      });
    }
    if (outcome.authorization?.state === 'settled') {
      ctx.logger.info('payment settled', { tx: hash, payer: request.payer, payee: a.to, amount: a.value, block: outcome.blockNumber });
      return { success: true, transaction: hash, network: request.network, payer: request.payer };
    }
    const reason = outcome.authorization?.reason ?? REASONS.transactionFailed;
    return settleFailure(request, { reason, message: outcome.error ?? 'The transfer failed' }, hash);
  } catch (error) {
    // Sent, but the outcome could not be recorded: the reconciler will.
    ctx.logger.error('settlement outcome not recorded', { tx: hash, error: safeError(error) });
    return pending;
  }
}
