/**
 * One call paid over a payment channel (x402 `batch-settlement` on EVM, "Server: State &
 * Forwarding"), run while holding the channel in the store so calls on one channel go one at a
 * time across every instance sharing the store:
 *
 * 1. the voucher must be for the server's charge so far plus the price (else the corrective 402
 *    with the server's channel state and the last voucher, so the client can resynchronise);
 * 2. a plain EOA voucher on a channel whose mirror is fresh is checked here (ecrecover, no round
 *    trip); deposits, ERC-1271 vouchers, stale mirrors and pending withdrawals go through the
 *    facilitator's `/verify`, whose channel snapshot refreshes the mirror; a channel whose
 *    withdrawal ends before a claim of this call would land is refused (withdrawal.ts);
 * 3. the handler runs; it may charge less than the price (`context.charge`);
 * 4. a deposit is settled by the facilitator; then the new charge and the voucher are written
 *    durably before the answer leaves, with `PAYMENT-RESPONSE` as the scheme's contract says, and
 *    with them the call's record for the registry (outbox.ts).
 *
 * Where the state and the payment disagree, the chain decides before anyone is refused: a voucher
 * above the mirrored balance (a deposit may have reached the chain while the crash that followed
 * kept it out of the state) and a voucher ahead of a state whose mirror is stale (a state recovered
 * from a damaged journal) are verified by the facilitator, whose snapshot refreshes the mirror and
 * raises a charge that is behind what the chain shows claimed.
 *
 * A refund payload skips the handler: the server completes it (amount, nonce, a claim of what is
 * charged, the authorizer's signatures when it holds the key) and the facilitator executes it.
 */
import { sha256, stringToBytes, zeroAddress } from 'viem';
import {
  acceptedMatches,
  BATCH_SETTLEMENT_SCHEME,
  channelIdOf,
  decodeBase64Json,
  encodeBase64Json,
  formatPrice,
  PAYMENT_RESPONSE_HEADER,
  type PaymentRequirements,
  RECEIPT_HEADER,
  X_PAYMENT_RESPONSE_HEADER,
} from '../../../x402/index';
import { voucherSignedBy } from './voucher-check';
import type { FacilitatorClient } from '../../facilitator-client';
import { failure, jsonAnswer, type StoredResponse } from '../../http';
import { type CreatorLogger, errorText } from '../../logger';
import type { PaidRequest, SchemeKit, SettledCall, SkillRoute } from '../../scheme';
import type { ChannelRequirements, ChannelSettings } from './settings';
import { signClaims, signRefund } from './claims';
import type { CallOutbox } from './outbox';
import type { ChannelState, ChannelStore } from './store';
import { type ChannelPayment, readChannelPayment, readSnapshot, type ChannelSnapshot } from './wire';
import { takesVouchers, WITHDRAWAL_PENDING } from './withdrawal';

const MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';
/** Largest answer a channel keeps for a resend, characters: a larger one is answered once. */
const MAX_KEPT_ANSWER = 1024 * 1024;
/** A shared store holds a channel for the handler's timeout plus this (a deposit's settlement, the writes). */
const HOLD_MARGIN_MS = 60_000;
const reason = (what: string) => `invalid_batch_settlement_evm_${what}`;

export interface ChannelDeps {
  kit: SchemeKit;
  facilitator: FacilitatorClient;
  store: ChannelStore;
  settings: ChannelSettings;
  chainId: number;
  logger: CreatorLogger;
  now: () => number;
  outbox: CallOutbox;
}

type Outcome = { response: StoredResponse; settled?: SettledCall };

/** The 402 of a channel route; `extra` is added to its channel offer (the corrective state). */
function required(deps: ChannelDeps, route: SkillRoute, error: string, extra?: Record<string, unknown>): StoredResponse {
  return deps.kit.required(route, error, extra ? { scheme: BATCH_SETTLEMENT_SCHEME, extra } : undefined);
}

const snapshotOf = (state: ChannelState) => ({
  channelId: state.channelId,
  balance: state.balance,
  totalClaimed: state.totalClaimed,
  withdrawRequestedAt: state.withdrawRequestedAt,
  refundNonce: state.refundNonce,
  chargedCumulativeAmount: state.chargedCumulativeAmount,
});

/** The corrective 402: the server's charge so far and the voucher that proves it. */
function corrective(deps: ChannelDeps, route: SkillRoute, state: ChannelState): StoredResponse {
  const voucherState = state.signature !== '0x' ? { signedMaxClaimable: state.signedMaxClaimable, signature: state.signature } : undefined;
  return required(deps, route, MISMATCH, { channelState: snapshotOf(state), ...(voucherState ? { voucherState } : {}) });
}

/** `PAYMENT-RESPONSE` of a channel call (the same value under `X-PAYMENT-RESPONSE`). */
function paymentResponse(body: Record<string, unknown>): Record<string, string> {
  const value = encodeBase64Json(body);
  return { [PAYMENT_RESPONSE_HEADER]: value, [X_PAYMENT_RESPONSE_HEADER]: value };
}

/**
 * The state after a snapshot read now (balance, claims, withdrawal, refund nonce). A charge below
 * what the chain shows claimed (a state that lost its latest records) is raised to it, as for a
 * channel seen for the first time: the vouchers below it are spent.
 */
function mirrored(state: ChannelState, snapshot: ChannelSnapshot, now: number): ChannelState {
  const behind = BigInt(state.chargedCumulativeAmount) < snapshot.totalClaimed;
  const claimed = snapshot.totalClaimed.toString();
  return {
    ...state,
    ...(behind ? { chargedCumulativeAmount: claimed, signedMaxClaimable: claimed, signature: '0x' as const, unclaimedSince: 0 } : {}),
    balance: snapshot.balance.toString(),
    totalClaimed: snapshot.totalClaimed.toString(),
    withdrawRequestedAt: snapshot.withdrawRequestedAt,
    refundNonce: snapshot.refundNonce.toString(),
    onchainSyncedAt: now,
  };
}

/** A channel seen for the first time: the chain's claimed total is the base (the scheme's recovery rule). */
function fresh(payment: ChannelPayment, snapshot: ChannelSnapshot, now: number): ChannelState {
  return mirrored(
    {
      channelId: payment.channelId,
      config: payment.config,
      chargedCumulativeAmount: snapshot.totalClaimed.toString(),
      signedMaxClaimable: snapshot.totalClaimed.toString(),
      signature: '0x',
      balance: '0',
      totalClaimed: '0',
      withdrawRequestedAt: 0,
      refundNonce: '0',
      onchainSyncedAt: 0,
      lastRequestTimestamp: 0,
      unclaimedSince: 0,
    },
    snapshot,
    now,
  );
}

/** Why this payment's channel is not one of this offer's, or undefined. */
function configProblem(deps: ChannelDeps, offer: ChannelRequirements, payment: ChannelPayment): string | undefined {
  const { config } = payment;
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  if (!acceptedMatches(payment.accepted, offer as unknown as PaymentRequirements))
    return 'The payment does not match the payment requirements of this skill';
  if (!same(config.receiver, offer.payTo)) return reason('receiver_mismatch');
  if (!same(config.receiverAuthorizer, offer.extra.receiverAuthorizer)) return reason('receiver_authorizer_mismatch');
  if (!same(config.token, offer.asset)) return reason('token_mismatch');
  if (config.withdrawDelay !== offer.extra.withdrawDelay) return reason('withdraw_delay_mismatch');
  if (channelIdOf(config, deps.chainId).toLowerCase() !== payment.channelId) return reason('channel_id_mismatch');
  return undefined;
}

/** Handles a `batch-settlement` payment (a POST's deposit or voucher, or a refund by POST or GET). */
export async function channelCall(deps: ChannelDeps, call: PaidRequest): Promise<StoredResponse> {
  const { route } = call;
  const offer = call.offer as unknown as ChannelRequirements;
  const payment = readChannelPayment(call.payload);
  if ('error' in payment) return required(deps, route, payment.error);
  const problem = configProblem(deps, offer, payment);
  if (problem) return required(deps, route, problem);
  let outcome: Outcome;
  try {
    outcome = await deps.store.update(
      payment.channelId,
      (current) => (payment.type === 'refund' ? refund(deps, call, offer, payment, current) : paid(deps, call, offer, payment, current)),
      // The handler's deadline, and a deposit's or refund's settlement after it.
      { config: payment.config, holdMs: route.skill.timeout + HOLD_MARGIN_MS },
    );
  } catch (error) {
    deps.logger.error('channel call failed', { skill: route.name, channel: payment.channelId, error: errorText(error) });
    return deps.kit.unavailable('The channel cannot be served right now; nothing was charged');
  }
  if (outcome.settled) deps.kit.settled(outcome.settled);
  return outcome.response;
}

/** The facilitator's verdict and snapshot, or the 402 to answer. */
async function verifyRemotely(
  deps: ChannelDeps,
  route: SkillRoute,
  offer: ChannelRequirements,
  payment: ChannelPayment,
): Promise<{ snapshot: ChannelSnapshot } | { response: StoredResponse }> {
  let verdict: Record<string, unknown>;
  try {
    verdict = await deps.facilitator.forward('/verify', payment.original, offer);
  } catch (error) {
    deps.logger.warn('payment facilitator unavailable', { skill: route.name, error: errorText(error) });
    return { response: deps.kit.unavailable('Payment facilitator unavailable; nothing was charged') };
  }
  if (verdict.isValid !== true) {
    const why = typeof verdict.invalidReason === 'string' ? verdict.invalidReason : 'invalid_payment';
    return { response: required(deps, route, why) };
  }
  const snapshot = readSnapshot(verdict.extra);
  if (!snapshot) return { response: failure(502, 'The facilitator did not report the channel state; nothing was charged') };
  return { snapshot };
}

const freshMirror = (deps: ChannelDeps, state: ChannelState) => deps.now() - state.onchainSyncedAt < deps.settings.freshMs;

/** Whether a voucher can be checked here: an EOA authorizer, a mirror younger than `freshMs`, no withdrawal pending. */
function checkableHere(deps: ChannelDeps, payment: ChannelPayment, state: ChannelState | undefined): state is ChannelState {
  return (
    payment.type === 'voucher' &&
    state !== undefined &&
    payment.config.payerAuthorizer !== zeroAddress &&
    state.withdrawRequestedAt === 0 &&
    freshMirror(deps, state)
  );
}

function signedByAuthorizer(deps: ChannelDeps, payment: ChannelPayment): boolean {
  return voucherSignedBy(payment.channelId, payment.maxClaimableAmount, deps.chainId, payment.signature, payment.config.payerAuthorizer);
}

/**
 * The corrective 402 (the channel's charge and the payer's latest voucher) for a voucher its payer
 * signed; a request signed by anyone else learns nothing of the channel (a latest voucher would let
 * a stranger send the payer's refund).
 */
async function correctiveFor(
  deps: ChannelDeps,
  route: SkillRoute,
  offer: ChannelRequirements,
  payment: ChannelPayment,
  state: ChannelState,
): Promise<StoredResponse> {
  if (payment.config.payerAuthorizer !== zeroAddress)
    return signedByAuthorizer(deps, payment) ? corrective(deps, route, state) : required(deps, route, reason('voucher_signature'));
  // A contract wallet's signature is checked where the chain can be asked.
  const verified = await verifyRemotely(deps, route, offer, payment);
  return 'response' in verified ? verified.response : corrective(deps, route, state);
}

/** What names a call for a resend: its skill and input. */
const callDigest = (call: PaidRequest) => sha256(stringToBytes(JSON.stringify([call.route.name, call.input]))).slice(2);

/**
 * The stored answer when `payment` is the voucher the latest answered call was paid with, sent
 * again for the same call: its answer was lost, and it was charged, so it gets that answer again.
 */
function resent(state: ChannelState, payment: ChannelPayment, call: PaidRequest): StoredResponse | undefined {
  const last = state.lastAnswer;
  if (!last || payment.type === 'refund') return undefined;
  if (payment.signature.toLowerCase() !== state.signature.toLowerCase()) return undefined;
  if (payment.maxClaimableAmount !== BigInt(state.signedMaxClaimable) || last.call !== callDigest(call)) return undefined;
  const headers = {
    'Content-Type': 'application/json',
    ...paymentResponse(last.receipt),
    ...(last.signed ? { [RECEIPT_HEADER]: last.signed } : {}),
    'X-Payment-Replayed': 'true',
  };
  return { status: 200, headers, body: last.body };
}

async function paid(
  deps: ChannelDeps,
  call: PaidRequest,
  offer: ChannelRequirements,
  payment: ChannelPayment,
  current: ChannelState | undefined,
): Promise<{ next?: ChannelState; value: Outcome }> {
  const { route } = call;
  const price = route.amount;
  const expected = (s: ChannelState) => BigInt(s.chargedCumulativeAmount) + price;
  let state: ChannelState | undefined;
  if (current && payment.maxClaimableAmount !== expected(current)) {
    const again = resent(current, payment, call);
    if (again) return { value: { response: again } };
    // Behind the state, or ahead of a state whose mirror is fresh: the payer resynchronises.
    if (payment.maxClaimableAmount < expected(current) || freshMirror(deps, current))
      return { value: { response: await correctiveFor(deps, route, offer, payment, current) } };
    // Ahead of a stale state: the chain is asked (below), for a voucher its payer signed.
    if (payment.config.payerAuthorizer !== zeroAddress && !signedByAuthorizer(deps, payment))
      return { value: { response: required(deps, route, reason('voucher_signature')) } };
  } else if (checkableHere(deps, payment, current)) {
    if (!signedByAuthorizer(deps, payment)) return { value: { response: required(deps, route, reason('voucher_signature')) } };
    // Above the mirrored balance, the chain decides (a top-up the state missed), not the mirror.
    if (payment.maxClaimableAmount <= BigInt(current.balance)) state = current;
  }
  if (!state) {
    const verified = await verifyRemotely(deps, route, offer, payment);
    if ('response' in verified) return { value: verified };
    state = current ? mirrored(current, verified.snapshot, deps.now()) : fresh(payment, verified.snapshot, deps.now());
    // The payer can take back what is unclaimed once its withdrawal ends: no charge whose claim would land after that.
    if (!takesVouchers(deps.settings, state, deps.now()))
      return { next: state, value: { response: required(deps, route, WITHDRAWAL_PENDING) } };
    if (payment.maxClaimableAmount !== expected(state)) {
      // The chain says more was claimed than this server knows of (its state was lost): resynchronise.
      return { next: state, value: { response: corrective(deps, route, state) } };
    }
  }

  const run = await deps.kit.run(call, { payer: payment.config.payer, timeoutMs: route.skill.timeout, chargeable: true });
  if (run.type === 'failed') return { value: { response: run.response } };
  const charge = run.charged;

  let transaction = '';
  if (payment.type === 'deposit') {
    let receipt: Record<string, unknown>;
    try {
      receipt = await deps.facilitator.forward('/settle', payment.original, offer);
    } catch (error) {
      deps.logger.warn('deposit outcome unknown (facilitator unavailable); result withheld', {
        skill: route.name,
        error: errorText(error),
      });
      return { value: { response: deps.kit.unavailable('Payment facilitator unavailable; the deposit may or may not have gone through') } };
    }
    if (receipt.success !== true) {
      const why = typeof receipt.errorReason === 'string' ? receipt.errorReason : reason('deposit_transaction_failed');
      return { value: { response: required(deps, route, why) } };
    }
    transaction = typeof receipt.transaction === 'string' ? receipt.transaction : '';
    const after = readSnapshot((receipt.extra as Record<string, unknown> | undefined)?.channelState);
    state = after
      ? mirrored(state, after, deps.now())
      : { ...state, balance: (BigInt(state.balance) + (payment.depositAmount ?? 0n)).toString() };
  }

  const now = deps.now();
  const charged = BigInt(state.chargedCumulativeAmount) + charge;
  const { lastAnswer: _previous, ...kept } = state;
  const next: ChannelState = {
    ...kept,
    chargedCumulativeAmount: charged.toString(),
    signedMaxClaimable: payment.maxClaimableAmount.toString(),
    signature: payment.signature,
    lastRequestTimestamp: now,
    unclaimedSince: charged > BigInt(state.totalClaimed) ? state.unclaimedSince || now : 0,
    unreported: deps.outbox.add(state, { skill: route.name, amount: charge, cumulative: charged }),
  };
  const receipt = {
    success: true,
    transaction,
    network: offer.network,
    payer: payment.config.payer,
    amount: payment.type === 'deposit' ? String(payment.depositAmount) : '',
    extra: { chargedAmount: charge.toString(), channelState: snapshotOf(next) },
  };
  const settled: SettledCall = {
    skill: route.name,
    scheme: BATCH_SETTLEMENT_SCHEME,
    amount: formatPrice(charge, route.terms.asset.decimals),
    amountAtomic: charge.toString(),
    payer: payment.config.payer,
    transaction,
    nonce: '',
    network: offer.network,
    channelId: payment.channelId,
    chargedCumulativeAmount: next.chargedCumulativeAmount,
    ...(run.tier === undefined ? {} : { tier: run.tier }),
  };
  const answer = await deps.kit.paidAnswer(route, settled, run.body, paymentResponse(receipt));
  const response = answer.response;
  // Kept for a resend of this voucher (a lost answer); an answer too large to keep is not.
  // With the receipts as sent (the offer-receipt in PAYMENT-RESPONSE, the signed one), so a resend carries them too.
  const sent = response.headers[PAYMENT_RESPONSE_HEADER];
  const signed = response.headers[RECEIPT_HEADER];
  if (response.body.length <= MAX_KEPT_ANSWER)
    next.lastAnswer = {
      call: callDigest(call),
      body: response.body,
      receipt: sent ? (decodeBase64Json(sent, 'malformed_settle_response', 'PAYMENT-RESPONSE') as Record<string, unknown>) : receipt,
      ...(signed ? { signed } : {}),
    };
  return { next, value: { response, settled: answer.settled } };
}

async function refund(
  deps: ChannelDeps,
  call: PaidRequest,
  offer: ChannelRequirements,
  payment: ChannelPayment,
  current: ChannelState | undefined,
): Promise<{ next?: ChannelState | null; value: Outcome }> {
  const { route } = call;
  if (current && payment.maxClaimableAmount !== BigInt(current.chargedCumulativeAmount))
    return { value: { response: await correctiveFor(deps, route, offer, payment, current) } };
  const verified = await verifyRemotely(deps, route, offer, payment);
  if ('response' in verified) return { value: verified };
  const state = current ? mirrored(current, verified.snapshot, deps.now()) : fresh(payment, verified.snapshot, deps.now());
  const charged = BigInt(state.chargedCumulativeAmount);
  if (payment.maxClaimableAmount !== charged) return { next: state, value: { response: corrective(deps, route, state) } };
  const available = BigInt(state.balance) - charged;
  if (available <= 0n) return { next: state, value: { response: required(deps, route, reason('refund_no_balance')) } };
  const amount = payment.refundAmount ?? available;
  if (amount > available) return { next: state, value: { response: required(deps, route, reason('refund_amount_invalid')) } };

  // The refund voucher is for exactly what was charged: claim with it, then refund the rest.
  const claims =
    charged > BigInt(state.totalClaimed)
      ? [{ state: { ...state, signedMaxClaimable: charged.toString(), signature: payment.signature } }]
      : [];
  const rows = claims.map(({ state: s }) => ({
    voucher: { channel: s.config, maxClaimableAmount: s.signedMaxClaimable },
    signature: s.signature,
    totalClaimed: s.chargedCumulativeAmount,
  }));
  const authorizer = deps.settings.authorizer;
  const nonce = BigInt(state.refundNonce);
  const payload = {
    ...(payment.original.payload as Record<string, unknown>),
    amount: amount.toString(),
    refundNonce: nonce.toString(),
    claims: rows,
    ...(authorizer
      ? {
          refundAuthorizerSignature: await signRefund(authorizer, deps.chainId, state.channelId, nonce, amount),
          ...(rows.length > 0
            ? {
                claimAuthorizerSignature: await signClaims(
                  authorizer,
                  deps.chainId,
                  claims.map((c) => c.state),
                ),
              }
            : {}),
        }
      : {}),
  };
  let receipt: Record<string, unknown>;
  try {
    receipt = await deps.facilitator.forward('/settle', { ...payment.original, payload }, offer);
  } catch (error) {
    deps.logger.warn('refund outcome unknown (facilitator unavailable)', { skill: route.name, error: errorText(error) });
    return {
      next: state,
      value: { response: deps.kit.unavailable('Payment facilitator unavailable; the refund may or may not have gone through') },
    };
  }
  if (receipt.success !== true) {
    const why = typeof receipt.errorReason === 'string' ? receipt.errorReason : reason('refund_transaction_failed');
    return { next: state, value: { response: required(deps, route, why) } };
  }
  const after = readSnapshot((receipt.extra as Record<string, unknown> | undefined)?.channelState);
  const next = after
    ? mirrored(state, after, deps.now())
    : { ...state, balance: (BigInt(state.balance) - amount).toString(), totalClaimed: charged.toString() };
  next.unclaimedSince = 0;
  next.unreported = deps.outbox.trim(next);
  const transaction = typeof receipt.transaction === 'string' ? receipt.transaction : '';
  const body = {
    success: true,
    transaction,
    network: offer.network,
    payer: payment.config.payer,
    amount: amount.toString(),
    extra: { channelState: snapshotOf(next) },
  };
  const answer = jsonAnswer(
    200,
    { success: true, refunded: amount.toString(), timestamp: new Date(deps.now()).toISOString() },
    paymentResponse(body),
  );
  // An emptied channel is forgotten, unless it keeps call records for the registry.
  return { next: amount === available && !next.unreported ? null : next, value: { response: answer } };
}
