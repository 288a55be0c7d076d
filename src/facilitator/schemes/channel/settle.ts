/**
 * `/settle` of the `batch-settlement` scheme, one function per payload type:
 * - `deposit`: the client's deposit verified again, then `deposit(config, amount, collector, data)`;
 *   the authorization's own key makes it single-use here (and the token's nonce on chain);
 * - `claim`: `claimWithSignature` of the rows, signed by the server, or by our receiver authorizer
 *   for channels that name it (with the receivers' consent unless the facilitator is open), batched
 *   with other servers' claims (claim-batcher.ts); a row that would claim nothing is refused
 *   (claim-checks.ts);
 * - `settle`: `settle(receiver, token)`, the receiver's claimed funds swept to it;
 * - `refund` (completed by the server): its claim and `refundWithSignature` in one `multicall`;
 *   one our receiver authorizer signs needs the receiver's consent (receiver-keys.ts), open or not.
 * Each transaction is recorded (store.ts) before it is signed and never sent twice.
 */
import { createHash, randomUUID } from 'node:crypto';
import { getAddress, parseEventLogs, type Address, type Hex, type PublicClient } from 'viem';
import {
  BATCH_SETTLEMENT_REASONS as R,
  channelIdOf,
  sameAddress,
  type ClaimPayload,
  type RefundSettlePayload,
  type SettlePayload,
  type VoucherClaim,
} from 'skill-market/x402';
import { batchSettlementAbi } from '../../../chain/batch-settlement';
import type { ReceiverAuthorizer } from './authorizer';
import type { ReceiverKeys } from './receiver-keys';
import type { ClaimBatcher } from './claim-batcher';
import { claimConsent, noOpClaim } from './claim-checks';
import {
  claimCall,
  multicallCall,
  readChannelState,
  readUnsettled,
  refundCall,
  SETTLEMENT_CONTRACT,
  settleCall,
  simulate,
  snapshot,
} from './contract';
import { CHANNEL_REASONS } from './reasons';
import type { ChannelSender, SendOutcome } from './sender';
import type { ChannelStore, NewOperation } from './store';
import type { ChannelSettleResponse } from './types';
import type { Rejection } from '../../chain';

export interface ChannelSettleContext {
  network: string;
  chainId: number;
  client: PublicClient;
  store: ChannelStore;
  sender: ChannelSender;
  authorizer: ReceiverAuthorizer;
  /** Who may ask for a claim or a refund our authorizer signs. */
  receiverKeys: ReceiverKeys;
  /** Our authorizer signs claims for anyone, without the receiver's key (refunds still need it). */
  open: boolean;
  /** Tokens this facilitator sponsors gas for. */
  assets: ReadonlySet<string>;
  /** A relayer address, to simulate from. */
  simulateFrom: Address;
  now(): Date;
}

export const failure = (network: string, rejection: Rejection, extra: Partial<ChannelSettleResponse> = {}): ChannelSettleResponse => ({
  success: false,
  errorReason: rejection.reason,
  errorMessage: rejection.message,
  transaction: '',
  network,
  ...extra,
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Records `op` and sends it, or, when an operation with its key exists (the same request again),
 * answers that one's outcome without sending anything.
 */
export async function recordAndSend(ctx: ChannelSettleContext, op: NewOperation, gas: bigint | undefined): Promise<SendOutcome | 'taken'> {
  const row = await ctx.store.insert(op, ctx.now());
  if (!row) return 'taken';
  return ctx.sender.send(row, gas);
}

/** The answer to an outcome other than confirmed; `pending` carries the hash to look up later. */
export function notConfirmed(
  ctx: ChannelSettleContext,
  outcome: Exclude<SendOutcome, { type: 'confirmed' }>,
  failed: string,
): ChannelSettleResponse {
  if (outcome.type === 'pending') {
    return failure(
      ctx.network,
      { reason: R.waitForReceiptFailed, message: 'Sent; the receipt was not seen in time' },
      { transaction: outcome.hash ?? '' },
    );
  }
  if (outcome.type === 'reverted')
    return failure(ctx.network, { reason: R.transactionReverted, message: outcome.message }, { transaction: outcome.hash });
  return failure(ctx.network, { reason: failed, message: outcome.message });
}

/** An operation already recorded under `key`: its transaction when it is mined, else pending. */
async function alreadyRecorded(ctx: ChannelSettleContext, key: string): Promise<SendOutcome> {
  const row = await ctx.store.byKey(key);
  const hash = (row?.txHash ?? undefined) as Hex | undefined;
  if (row?.state === 'confirmed' && hash) return { type: 'confirmed', hash, receipt: await ctx.client.getTransactionReceipt({ hash }) };
  if (row?.state === 'failed') return { type: 'failed', message: row.error ?? 'The transaction failed' };
  if (row?.state === 'reverted' && hash) return { type: 'reverted', hash, message: row.error ?? 'The transaction reverted' };
  return { type: 'pending', hash };
}

const claimKey = (ctx: ChannelSettleContext, data: Hex) => `claim|${ctx.network}|${sha256(data)}`;

/** Sends one claim transaction of `claims` under `signature` (recorded under its calldata: the same claim is never sent twice). */
export async function sendClaim(ctx: ChannelSettleContext, claims: readonly VoucherClaim[], signature: Hex): Promise<SendOutcome> {
  const data = claimCall(claims, signature);
  const key = claimKey(ctx, data);
  const outcome = await recordAndSend(
    ctx,
    { key, network: ctx.network, kind: 'claim', target: SETTLEMENT_CONTRACT, callData: data },
    undefined,
  );
  return outcome === 'taken' ? alreadyRecorded(ctx, key) : outcome;
}

/** Why the rows' tokens are not all ones this facilitator sponsors, if so. */
function unsponsored(ctx: ChannelSettleContext, claims: readonly VoucherClaim[]): Rejection | undefined {
  const token = claims.find((c) => !ctx.assets.has(c.voucher.channel.token.toLowerCase()))?.voucher.channel.token;
  return token ? { reason: CHANNEL_REASONS.assetNotAllowed, message: `The token ${token} is not one this facilitator settles` } : undefined;
}

/**
 * A claim. Signed by the server (`claimAuthorizerSignature`), it is relayed; without it, our
 * authorizer signs, and (unless the facilitator is open) only for the receivers: `bearer` must be a
 * key bound to every row's receiver. Either way each row must raise a distinct channel's claimed
 * total, except in a claim recorded here already, whose outcome is answered again.
 */
export async function settleClaim(
  ctx: ChannelSettleContext,
  payload: ClaimPayload,
  batcher: ClaimBatcher<SendOutcome>,
  bearer: string | undefined,
): Promise<ChannelSettleResponse> {
  const refused = unsponsored(ctx, payload.claims);
  if (refused) return failure(ctx.network, refused);
  const authorizers = new Set(payload.claims.map((c) => c.voucher.channel.receiverAuthorizer.toLowerCase()));
  if (authorizers.size > 1) {
    return failure(ctx.network, { reason: R.claimPayload, message: 'The rows of one claim must share their receiverAuthorizer' });
  }
  const signature = payload.claimAuthorizerSignature;
  if (!signature) {
    const [authorizer] = authorizers;
    if (!ctx.authorizer.is(authorizer ?? '')) {
      const message = `Without claimAuthorizerSignature, the channels must name this facilitator's receiverAuthorizer ${ctx.authorizer.address}`;
      return failure(ctx.network, { reason: R.authorizerAddressMismatch, message });
    }
    const unconsented = claimConsent(ctx.receiverKeys, ctx.open, payload.claims, bearer);
    if (unconsented) return failure(ctx.network, unconsented);
  }
  const data = claimCall(payload.claims, signature ?? (await ctx.authorizer.signClaims(payload.claims)));
  // The very claim again (its answer lost on the way): the recorded outcome, nothing sent.
  const recorded = await ctx.store.byKey(claimKey(ctx, data));
  let outcome: SendOutcome;
  if (recorded) {
    outcome = await alreadyRecorded(ctx, recorded.key);
  } else {
    const why = (await noOpClaim(ctx.client, ctx.chainId, payload.claims)) ?? (await simulated(ctx, data));
    if (why) return failure(ctx.network, why);
    outcome = signature ? await sendClaim(ctx, payload.claims, signature) : await batcher.submit(payload.claims);
  }
  if (outcome.type !== 'confirmed') return notConfirmed(ctx, outcome, R.claimTransactionFailed);
  return { success: true, transaction: outcome.hash, network: ctx.network, amount: '' };
}

/** Why the claim `data` would revert, if so. */
async function simulated(ctx: ChannelSettleContext, data: Hex): Promise<Rejection | undefined> {
  const why = await simulate(ctx.client, ctx.simulateFrom, data);
  return why ? { reason: R.claimSimulationFailed, message: why } : undefined;
}

export async function settleSweep(ctx: ChannelSettleContext, payload: SettlePayload): Promise<ChannelSettleResponse> {
  const receiver = getAddress(payload.receiver);
  const token = getAddress(payload.token);
  if (!ctx.assets.has(token.toLowerCase())) {
    return failure(ctx.network, {
      reason: CHANNEL_REASONS.assetNotAllowed,
      message: `The token ${token} is not one this facilitator settles`,
    });
  }
  const unsettled = await readUnsettled(ctx.client, receiver, token);
  if (unsettled === 0n)
    return failure(ctx.network, { reason: R.nothingToSettle, message: 'Nothing claimed is left to settle for this receiver and token' });
  const data = settleCall(receiver, token);
  const why = await simulate(ctx.client, ctx.simulateFrom, data);
  if (why) return failure(ctx.network, { reason: R.settleSimulationFailed, message: why });
  const op = { key: `settle|${ctx.network}|${receiver}|${token}|${randomUUID()}`, network: ctx.network, kind: 'settle' as const };
  const outcome = await recordAndSend(ctx, { ...op, target: SETTLEMENT_CONTRACT, callData: data }, undefined);
  if (outcome === 'taken') throw new Error('a fresh settle key was taken');
  if (outcome.type !== 'confirmed') return notConfirmed(ctx, outcome, R.settleTransactionFailed);
  const settled = parseEventLogs({ abi: batchSettlementAbi, eventName: 'Settled', logs: outcome.receipt.logs }).find(
    (log) =>
      sameAddress(log.address, SETTLEMENT_CONTRACT) && sameAddress(log.args.receiver, receiver) && sameAddress(log.args.token, token),
  );
  return { success: true, transaction: outcome.hash, network: ctx.network, amount: (settled?.args.amount ?? 0n).toString() };
}

/**
 * A refund the server completed. Without its `refundAuthorizerSignature`, our authorizer signs, and
 * only for the receiver: `bearer` must be a key bound to the channel's receiver. Otherwise anyone
 * holding an old voucher (the payer) could get back what the server answered but has not claimed.
 */
export async function settleRefund(
  ctx: ChannelSettleContext,
  payload: RefundSettlePayload,
  bearer: string | undefined,
): Promise<ChannelSettleResponse> {
  const config = payload.channelConfig;
  const payer = getAddress(config.payer);
  const fail = (reason: string, message: string) => failure(ctx.network, { reason, message }, { payer });
  const channelId = channelIdOf(config, ctx.chainId);
  if (channelId.toLowerCase() !== payload.voucher.channelId.toLowerCase())
    return fail(R.channelIdMismatch, 'The config does not hash to voucher.channelId');
  if (!ctx.assets.has(config.token.toLowerCase()))
    return fail(CHANNEL_REASONS.assetNotAllowed, 'The channel token is not one this facilitator settles');
  const refused = unsponsored(ctx, payload.claims);
  if (refused) return failure(ctx.network, refused, { payer });
  const state = await readChannelState(ctx.client, channelId);
  const nonce = BigInt(payload.refundNonce);
  if (nonce !== state.refundNonce) return fail(R.refundPayload, `refundNonce ${nonce} is not the channel's ${state.refundNonce}`);
  const claimedAfter = payload.claims
    .filter((c) => channelIdOf(c.voucher.channel, ctx.chainId).toLowerCase() === channelId.toLowerCase())
    .reduce((max, c) => (BigInt(c.totalClaimed) > max ? BigInt(c.totalClaimed) : max), state.totalClaimed);
  if (claimedAfter >= state.balance) return fail(R.refundNoBalance, 'No unclaimed balance is left to refund');

  const amount = BigInt(payload.amount);
  let refundSignature = payload.refundAuthorizerSignature;
  if (!refundSignature) {
    if (!ctx.authorizer.is(config.receiverAuthorizer))
      return fail(
        R.authorizerAddressMismatch,
        'Without refundAuthorizerSignature, the channel must name this facilitator’s receiverAuthorizer',
      );
    if (!ctx.receiverKeys.consents(config.receiver, bearer))
      return fail(
        CHANNEL_REASONS.refundReceiverConsent,
        `A refund this facilitator's receiverAuthorizer signs needs the receiver's consent: send Authorization: Bearer <a key bound to ${getAddress(config.receiver)} in FACILITATOR_RECEIVER_KEYS>, or let the server sign the refund with its own receiverAuthorizer (MARKET_RECEIVER_AUTHORIZER_KEY)`,
      );
    refundSignature = await ctx.authorizer.signRefund(channelId, nonce, amount);
  }
  const calls = [refundCall(config, amount, nonce, refundSignature)];
  if (payload.claims.length > 0) {
    let claimSignature = payload.claimAuthorizerSignature;
    if (!claimSignature) {
      if (!payload.claims.every((c) => ctx.authorizer.is(c.voucher.channel.receiverAuthorizer))) {
        return fail(
          R.authorizerAddressMismatch,
          'Without claimAuthorizerSignature, the claimed channels must name this facilitator’s receiverAuthorizer',
        );
      }
      // The rows may name other channels than the refunded one: each needs its receiver's consent.
      const unconsented = claimConsent(ctx.receiverKeys, ctx.open, payload.claims, bearer);
      if (unconsented) return failure(ctx.network, unconsented, { payer });
      claimSignature = await ctx.authorizer.signClaims(payload.claims);
    }
    calls.unshift(claimCall(payload.claims, claimSignature));
  }
  const data = calls.length === 1 ? (calls[0] as Hex) : multicallCall(calls);
  const why = await simulate(ctx.client, ctx.simulateFrom, data);
  if (why) return fail(R.refundSimulationFailed, why);
  const key = `refund|${ctx.network}|${channelId}|${nonce}`;
  let outcome = await recordAndSend(
    ctx,
    { key, network: ctx.network, kind: 'refund', target: SETTLEMENT_CONTRACT, callData: data },
    undefined,
  );
  if (outcome === 'taken') outcome = await alreadyRecorded(ctx, key);
  if (outcome.type !== 'confirmed') return { ...notConfirmed(ctx, outcome, R.refundTransactionFailed), payer };
  const after = await readChannelState(ctx.client, channelId);
  const refunded = state.balance > after.balance ? state.balance - after.balance : 0n;
  return {
    success: true,
    transaction: outcome.hash,
    network: ctx.network,
    payer,
    amount: refunded.toString(),
    extra: { channelState: snapshot(channelId, after) },
  };
}
