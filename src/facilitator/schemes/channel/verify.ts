/**
 * `/verify` of the `batch-settlement` scheme (deposit, voucher, refund) and the deposit's
 * `/settle`, which runs the same checks and then sends the deposit once.
 */
import { getAddress, type Address } from 'viem';
import { BATCH_SETTLEMENT_REASONS as R, type BatchClientPayload, type BatchRequirements, type DepositPayload } from 'skill-market/x402';
import { checkChannelConfig, checkCoverage, checkDepositAuthorization, checkPayerBalance, depositNonce, voucherSigned } from './checks';
import { depositCall, readChannelState, SETTLEMENT_CONTRACT, snapshot, type ChannelState } from './contract';
import { CHANNEL_REASONS } from './reasons';
import { failure, notConfirmed, recordAndSend, type ChannelSettleContext } from './settle';
import type { ChannelSettleResponse, ChannelVerifyResponse } from './types';
import type { Rejection } from '../../chain';

/** The refusal of a deposit authorization this facilitator has already taken (single use, across instances). */
const AUTHORIZATION_PRESENTED: Rejection = {
  reason: CHANNEL_REASONS.depositAuthorizationUsed,
  message: 'This deposit authorization was already presented',
};

/** The single-use key of a deposit's ERC-3009 authorization: the token's own (network, token, payer, nonce). */
function depositKey(network: string, payload: DepositPayload): string {
  const c = payload.channelConfig;
  return `deposit|${network}|${c.token}|${c.payer}|${depositNonce(payload)}`.toLowerCase();
}

type Checked = { state: ChannelState; payer: Address } | (Rejection & { payer: Address });

/** Every rule for a client's payload, the chain read once; a deposit's authorization must be unused here. */
async function checkPayment(ctx: ChannelSettleContext, payload: BatchClientPayload, requirements: BatchRequirements): Promise<Checked> {
  const payer = getAddress(payload.channelConfig.payer);
  const no = (rejection: Rejection) => ({ ...rejection, payer });
  if (!ctx.assets.has(requirements.asset.toLowerCase())) {
    return no({ reason: CHANNEL_REASONS.assetNotAllowed, message: `The asset ${requirements.asset} is not one this facilitator settles` });
  }
  const config = checkChannelConfig(payload, requirements, ctx.chainId);
  if (config) return no(config);
  if (payload.type === 'deposit') {
    const nowSeconds = Math.floor(ctx.now().getTime() / 1000);
    const authorization = await checkDepositAuthorization(ctx.client, payload, requirements, ctx.chainId, nowSeconds);
    if (authorization) return no(authorization);
  }
  if (!(await voucherSigned(ctx.client, payload.channelConfig, payload.voucher, ctx.chainId))) {
    return no({ reason: R.voucherSignature, message: 'The voucher is not signed by the channel’s payer (or payer authorizer)' });
  }
  let state: ChannelState;
  try {
    state = await readChannelState(ctx.client, payload.voucher.channelId);
  } catch {
    return no({ reason: R.channelStateReadFailed, message: 'The channel state could not be read' });
  }
  const coverage = checkCoverage(payload, state);
  if (coverage) return no(coverage);
  if (payload.type === 'deposit') {
    const balance = await checkPayerBalance(ctx.client, payload);
    if (balance) return no(balance);
    if (await ctx.store.byKey(depositKey(ctx.network, payload))) {
      return no(AUTHORIZATION_PRESENTED);
    }
  }
  return { state, payer };
}

export async function verifyPayment(
  ctx: ChannelSettleContext,
  payload: BatchClientPayload,
  requirements: BatchRequirements,
): Promise<ChannelVerifyResponse> {
  const checked = await checkPayment(ctx, payload, requirements);
  if ('reason' in checked) return { isValid: false, invalidReason: checked.reason, invalidMessage: checked.message, payer: checked.payer };
  if (payload.type === 'deposit') {
    const why = await depositSimulation(ctx, payload);
    if (why) {
      const refusal = await simulationRefusal(ctx, payload, why);
      return { isValid: false, invalidReason: refusal.reason, invalidMessage: refusal.message, payer: checked.payer };
    }
  }
  return { isValid: true, payer: checked.payer, extra: snapshot(payload.voucher.channelId, checked.state) };
}

/**
 * The refusal of a deposit whose simulation failed: "authorization used" when this facilitator
 * took the same authorization meanwhile (a concurrent /settle of it sent its deposit between this
 * request's checks and its simulation), else the simulation's reason.
 */
async function simulationRefusal(ctx: ChannelSettleContext, payload: DepositPayload, why: string): Promise<Rejection> {
  if (await ctx.store.byKey(depositKey(ctx.network, payload))) return AUTHORIZATION_PRESENTED;
  return { reason: R.depositSimulationFailed, message: why };
}

/** Why the deposit would revert (authorization used on chain, balance moved), undefined when it would not. */
async function depositSimulation(ctx: ChannelSettleContext, payload: DepositPayload): Promise<string | undefined> {
  const auth = payload.deposit.authorization.erc3009Authorization;
  if (!auth) return 'No ERC-3009 authorization';
  const outcome = await ctx.sender.estimate(
    { target: SETTLEMENT_CONTRACT, callData: depositCall(payload.channelConfig, BigInt(payload.deposit.amount), auth) },
    ctx.simulateFrom,
  );
  return typeof outcome === 'string' ? outcome : undefined;
}

export async function settleDeposit(
  ctx: ChannelSettleContext,
  payload: DepositPayload,
  requirements: BatchRequirements,
): Promise<ChannelSettleResponse> {
  const checked = await checkPayment(ctx, payload, requirements);
  if ('reason' in checked) return failure(ctx.network, checked, { payer: checked.payer });
  const payer = checked.payer;
  const auth = payload.deposit.authorization.erc3009Authorization;
  if (!auth) return failure(ctx.network, { reason: R.erc3009AuthorizationRequired, message: 'No ERC-3009 authorization' }, { payer });
  const amount = BigInt(payload.deposit.amount);
  const data = depositCall(payload.channelConfig, amount, auth);
  const gas = await ctx.sender.estimate({ target: SETTLEMENT_CONTRACT, callData: data }, ctx.simulateFrom);
  if (typeof gas === 'string') return failure(ctx.network, await simulationRefusal(ctx, payload, gas), { payer });
  const op = {
    key: depositKey(ctx.network, payload),
    network: ctx.network,
    kind: 'deposit' as const,
    target: SETTLEMENT_CONTRACT,
    callData: data,
  };
  const outcome = await recordAndSend(ctx, op, gas);
  if (outcome === 'taken') {
    return failure(ctx.network, AUTHORIZATION_PRESENTED, { payer });
  }
  if (outcome.type !== 'confirmed') return { ...notConfirmed(ctx, outcome, R.depositTransactionFailed), payer };
  const state = await readChannelState(ctx.client, payload.voucher.channelId).catch(() => ({
    ...checked.state,
    balance: checked.state.balance + amount,
  }));
  return {
    success: true,
    transaction: outcome.hash,
    network: ctx.network,
    payer,
    amount: payload.deposit.amount,
    asset: getAddress(requirements.asset),
    extra: { channelState: snapshot(payload.voucher.channelId, state) },
  };
}
