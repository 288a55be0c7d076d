/**
 * Settlement of a claimed authorization: estimate (which simulates the transfer against the
 * current chain state), store the receipt, broadcast through a relayer lane, then wait a bounded
 * time for the receipt. A transfer sent but not yet seen answers `settlement_pending` with its
 * hash; the reconciler records its final status later. Nothing is ever sent twice.
 */
import type { Hex, PublicClient } from 'viem';
import type { SettleResponse } from 'skill-market/x402';
import type { Logger } from '../log';
import { revertText, safeError, transferCall, type ChainReader, type Rejection } from './chain';
import { REASONS } from './reasons';
import { outcomeOf, waitForReceipt } from './receipts';
import type { RelayerPool, SendResult } from './relayer';
import type { PaymentRequest } from './request';
import type { AuthorizationRow, PaymentStore } from './store';
import type { Clock } from './types';

export interface SettleContext {
  store: PaymentStore;
  chain: ChainReader;
  client: PublicClient;
  relayers: RelayerPool;
  clock: Clock;
  logger: Logger;
  receiptTimeoutMs: number;
  pollIntervalMs: number;
}

/** Sends after a nonce or fee race are retried with a fresh nonce this many times. */
const MAX_SEND_ATTEMPTS = 3;

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

/** Submits the transfer of `claimed` (state `settling`) and answers with its outcome. */
export async function submitSettlement(ctx: SettleContext, request: PaymentRequest, claimed: AuthorizationRow): Promise<SettleResponse> {
  const { store, clock, logger } = ctx;
  const call = transferCall(request, claimed.signerKind);
  const a = request.payment.authorization;
  const log = logger.child({ payer: request.payer, payee: a.to, amount: a.value, network: request.requirements.network });

  for (let attempt = 1; ; attempt++) {
    let sent: Extract<SendResult, { type: 'sent' | 'unknown' }>;
    try {
      const relayer = ctx.relayers.pick();
      const estimate = await ctx.chain.estimateGas(call, relayer.address, request);
      if ('reason' in estimate) {
        await store.fail(claimed.id, estimate.reason, clock.now());
        return settleFailure(request, estimate);
      }
      const gas = (estimate.gas * 12n) / 10n + 10_000n; // headroom: state may shift between estimate and mining
      const result = await relayer.send({ ...call, gas }, (hash, nonce) =>
        store.recordSubmission({ authorization: claimed, txHash: hash, relayer: relayer.address, relayerNonce: nonce }, clock.now()),
      );
      if (result.type === 'rejected') {
        const error = revertText(result.error);
        const retry = result.retryable && attempt < MAX_SEND_ATTEMPTS;
        const authorization = retry ? undefined : { state: 'failed' as const, reason: REASONS.transactionFailed };
        await store.finalize(result.hash, { status: 'dropped', error, authorization }, clock.now());
        log.warn('relayer transaction refused', { tx: result.hash, relayer: relayer.address, error, retry });
        if (retry) continue;
        return settleFailure(request, { reason: REASONS.transactionFailed, message: `The node refused the transaction: ${error}` });
      }
      sent = result;
      if (result.type === 'unknown') log.warn('relayer broadcast unconfirmed', { tx: result.hash, error: revertText(result.error) });
    } catch (error) {
      // Nothing was broadcast: the claim ends here and the payer must sign anew.
      log.error('settlement failed before broadcast', { error: safeError(error) });
      await store.fail(claimed.id, REASONS.unexpectedSettleError, clock.now()).catch(() => undefined);
      return settleFailure(request, { reason: REASONS.unexpectedSettleError, message: 'The settlement could not be submitted' });
    }
    return awaitOutcome(ctx, request, sent.hash);
  }
}

/** Waits (bounded) for the receipt of a broadcast transfer and records what it shows. */
async function awaitOutcome(ctx: SettleContext, request: PaymentRequest, hash: Hex): Promise<SettleResponse> {
  const a = request.payment.authorization;
  const pending = settleFailure(request, { reason: REASONS.settlementPending, message: 'Sent; the receipt was not seen in time' }, hash);
  try {
    const receipt = await waitForReceipt(ctx.client, hash, ctx.receiptTimeoutMs, ctx.pollIntervalMs);
    if (!receipt) return pending;
    const outcome = outcomeOf(receipt, { asset: request.requirements.asset, from: request.payer, to: a.to, value: BigInt(a.value) });
    await ctx.store.finalize(hash, outcome, ctx.clock.now());
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
