/**
 * One paid call, in the order that protects both sides: claim the proof (one proof, one run),
 * verify it with the facilitator (for a payer who already paid here: checked here and verified by
 * the settle itself, see payers.ts), run the handler under its deadline, and only after a good
 * result settle the payment; the result leaves only with a settled payment. When the settlement's
 * outcome is unknown (its answer lost, or pending), the result is held, not dropped, and so is the
 * request: standard x402 clients send a paid request once and expect the result (or a 402), so it
 * is answered as soon as the outcome is found (settlement.ts), for up to `holdMs`. Only past that
 * bound does the client hear 409 `payment_pending`; a retry with the same proof then waits the
 * same way and gets the result once the transfer is confirmed. A copy of a proof that is being
 * processed waits for the first's answer in the same way.
 */
import { runHandler } from './run';
import {
  authorizationKey,
  FACILITATOR_REASONS,
  formatPrice,
  paymentFingerprint,
  paymentMatchesRequirements,
  paymentRequiredResponse,
  readPaymentHeader,
  sameAddress,
  settleResponseHeaders,
  type DecodedPayment,
  type PaymentTerms,
  type SettleResponse,
} from '../x402/index';
import { SkillTimeoutError } from './errors';
import type { Exposure } from './exposure';
import type { FacilitatorClient } from './facilitator-client';
import { failure, jsonAnswer, pendingAnswer, toResponse, type StoredResponse } from './http';
import type { ProofLedger } from './ledger';
import { callSafely, errorText, type CreatorLogger } from './logger';
import type { PayerTrust } from './payers';
import type { HeldCall, SettlementWatcher } from './settlement';
import type { Skill } from './skill';
import { channelCall, type ChannelDeps } from './channels/channel-call';
import type { ChannelRequirements } from './channels/settings';
import { channelHeader, channelRefundHeader } from './channels/wire';

/** Seconds an authorization must still be valid after the handler, for settlement to go through. */
const SETTLE_MARGIN_SECONDS = 8;

/** A skill ready to be sold: its definition and its payment terms. */
export interface SkillRoute {
  name: string;
  skill: Skill;
  terms: PaymentTerms;
  /** Price in the asset's atomic units. */
  amount: bigint;
  /** The payment-channel offer (after `exact` in `terms.paymentRequired.accepts`), when the skill has one. */
  channel?: ChannelRequirements;
}

/** A call whose payment went through, as call tracking and `onSettled` see it. */
export interface SettledCall {
  skill: string;
  /** The amount in whole tokens, e.g. `"0.001"`, for people (logs, `onSettled`). */
  amount: string;
  /** The amount paid (a channel call: charged) in the token's atomic units, e.g. `"1000"`: what call tracking reports. */
  amountAtomic?: string;
  payer: string;
  /** Settlement transaction hash; for a channel call the deposit's, or `""` (a voucher moves nothing yet). */
  transaction: string;
  /** The payer's EIP-3009 authorization nonce: which payment of the transaction this is (a batch settles many); `""` for a channel call. */
  nonce: string;
  network: string;
  /** Channel calls: the channel (bytes32 hex). */
  channelId?: string;
  /** Channel calls: the channel's cumulative charge after this call, atomic units. */
  chargedCumulativeAmount?: string;
}

export interface PaidCallDeps {
  facilitator: FacilitatorClient;
  ledger: ProofLedger;
  /** Finds out the outcome of held calls. */
  settlements: SettlementWatcher;
  /** Settlement mode per call and the bound on unconfirmed value. */
  exposure: Exposure;
  /** Whose calls the facilitator verifies at settlement instead of before the handler. */
  payers: PayerTrust;
  logger: CreatorLogger;
  exposeErrors: boolean;
  /** Longest a request waits for the open payment outcome of its call (or of a copy in progress), ms. */
  holdMs: number;
  now: () => number;
  onCall?: ((skillName: string, input: unknown) => unknown) | undefined;
  onError?: ((skillName: string, error: unknown) => unknown) | undefined;
  onSettled?: ((call: SettledCall) => void) | undefined;
  /** Payment channels, when the server offers them. */
  channels?: ChannelDeps | undefined;
}

/** The 402 answer of a route, as a storable response. */
export function paymentRequired(route: SkillRoute, error?: string): StoredResponse {
  const answer = paymentRequiredResponse(route.terms, error);
  return { status: answer.status, headers: answer.headers, body: JSON.stringify(answer.body) };
}

/** The call-tracking record of a settled payment. */
export function settledCall(route: SkillRoute, receipt: SettleResponse, authorization: { from: string; nonce: string }): SettledCall {
  return {
    skill: route.name,
    amount: formatPrice(route.amount, route.terms.asset.decimals),
    amountAtomic: route.amount.toString(),
    payer: receipt.payer ?? authorization.from,
    transaction: receipt.transaction,
    nonce: authorization.nonce,
    network: receipt.network,
  };
}

/**
 * `GET /<name>`: the reference `batch-settlement` client probes a skill's terms and sends its
 * cooperative refund with GET. Without a payment: the skill's 402, as for POST. A channel refund:
 * the refund path (the handler does not run). Any other payment: 405, nothing verified or charged
 * (a paid call is a POST with its input).
 */
export async function paidGet(deps: PaidCallDeps, route: SkillRoute, request: Request): Promise<Response> {
  const { headers } = request;
  if (!headers.has('PAYMENT-SIGNATURE') && !headers.has('X-PAYMENT')) return toResponse(paymentRequired(route));
  const refund = route.channel && deps.channels ? channelRefundHeader(headers) : undefined;
  if (refund && deps.channels) return channelCall(deps.channels, route, {}, request, refund);
  return toResponse(failure(405, 'Method not allowed: pay for a skill with POST (GET takes only a channel refund)', {}, { Allow: 'POST' }));
}

/** Handles `POST /<name>` once the input is known to be valid. */
export async function paidCall(deps: PaidCallDeps, route: SkillRoute, input: unknown, request: Request): Promise<Response> {
  const channel = route.channel && deps.channels ? channelHeader(request.headers) : undefined;
  if (channel && deps.channels) return channelCall(deps.channels, route, input, request, channel);
  const header = readPaymentHeader(request.headers);
  if (header.type === 'none') return toResponse(paymentRequired(route));
  if (header.type === 'error') return toResponse(paymentRequired(route, header.error.message));
  const payment = header.payment;
  const { requirements } = route.terms;
  const auth = payment.authorization;
  if (
    !paymentMatchesRequirements(payment, requirements) ||
    !sameAddress(auth.to, requirements.payTo) ||
    auth.value !== requirements.amount
  ) {
    return toResponse(paymentRequired(route, 'The payment does not match the payment requirements of this skill'));
  }

  const key = authorizationKey({ network: requirements.network, asset: requirements.asset, payer: auth.from, nonce: auth.nonce });
  // What makes a call "the same call": skill, signed authorization and input.
  const claim = await claimOrWait(deps, key, paymentFingerprint(payment, [route.name, input]), BigInt(auth.validBefore));
  switch (claim.type) {
    case 'busy':
      return toResponse(pendingAnswer('This payment is already being processed; retry with the same proof for its result'));
    case 'pending':
      return toResponse(pendingAnswer('Payment pending: the transfer is not confirmed yet; retry with the same proof for the result'));
    case 'replay':
      return toResponse(claim.response, { 'X-Payment-Replayed': 'true' });
    case 'used':
      return toResponse(paymentRequired(route, FACILITATOR_REASONS.nonceAlreadyUsed));
    case 'full':
      return toResponse(failure(503, 'Too many payments in progress; retry shortly', {}, { 'Retry-After': '1' }));
    case 'claimed':
      break;
  }
  const refusal = deps.exposure.refusal(auth.from);
  if (refusal) {
    deps.ledger.release(key);
    return toResponse(paymentRequired(route, refusal));
  }

  const resource = { url: route.terms.paymentRequired.resource.url, description: route.skill.description ?? '' };
  // A payer who already paid here is verified by the settle itself (payers.ts); others first.
  const atSettlement = await deps.payers.take(payment, requirements, deps.now());
  if (!atSettlement) {
    try {
      const verdict = await deps.facilitator.verify(payment, requirements, resource);
      if (!verdict.isValid) {
        deps.ledger.release(key);
        return toResponse(paymentRequired(route, verdict.invalidReason ?? 'invalid_payment'));
      }
    } catch (error) {
      deps.ledger.release(key);
      deps.logger.warn('payment facilitator unavailable', { skill: route.name, error: errorText(error) });
      return toResponse(failure(503, 'Payment facilitator unavailable; nothing was charged', {}, { 'Retry-After': '2' }));
    }
  }

  let answer: StoredResponse | Held;
  try {
    answer = await runAndSettle(deps, route, payment, input, request, resource);
  } catch (error) {
    deps.logger.error('paid call failed', { skill: route.name, error: errorText(error) });
    answer = failure(500, 'Internal server error');
  } finally {
    if (atSettlement) deps.payers.release(auth.from);
  }
  if ('held' in answer) {
    deps.ledger.hold(key, answer.held);
    deps.settlements.watch({ key, route, payment, resource, transaction: answer.transaction } satisfies HeldCall);
    const final = await deps.ledger.outcome(key, deps.holdMs);
    if (final) return toResponse(final);
    return toResponse(
      pendingAnswer('Payment pending: the settlement was sent but is not confirmed yet; retry with the same proof for the result'),
    );
  }
  deps.ledger.complete(key, answer);
  return toResponse(answer);
}

/**
 * Claims the proof; while a copy of it is being processed (`busy`) or its call's payment is still
 * open (`pending`), waits for that call's answer and claims again, for up to `holdMs` in all.
 */
async function claimOrWait(deps: PaidCallDeps, key: string, print: string, validBefore: bigint) {
  const deadline = Date.now() + deps.holdMs;
  let claim = deps.ledger.claim(key, print, validBefore);
  while (claim.type === 'busy' || claim.type === 'pending') {
    const left = deadline - Date.now();
    if (left <= 0) break;
    await deps.ledger.outcome(key, left);
    claim = deps.ledger.claim(key, print, validBefore);
  }
  return claim;
}

/** A result whose payment outcome is unknown: kept until it is known. */
interface Held {
  held: StoredResponse;
  transaction: string;
}

async function runAndSettle(
  deps: PaidCallDeps,
  route: SkillRoute,
  payment: DecodedPayment,
  input: unknown,
  request: Request,
  resource: { url: string; description: string },
): Promise<StoredResponse | Held> {
  const { name, skill } = route;
  const payer = payment.authorization.from;
  const secondsLeft = Number(BigInt(payment.authorization.validBefore) - BigInt(Math.floor(deps.now() / 1000))) - SETTLE_MARGIN_SECONDS;
  const timeoutMs = Math.min(skill.timeout, secondsLeft * 1000);
  if (timeoutMs <= 0) return paymentRequired(route, FACILITATOR_REASONS.validBefore);

  callSafely(deps.logger, 'onCall', () => deps.onCall?.(name, input));
  // An exact payment is the price: a reported lower charge changes nothing.
  const outcome = await runHandler(skill, input, { skill: name, payer, request, charge: () => {} }, timeoutMs);
  switch (outcome.type) {
    case 'error':
      callSafely(deps.logger, 'onError', () => deps.onError?.(name, outcome.error));
      return failure(500, deps.exposeErrors ? errorText(outcome.error) || 'Skill failed' : 'Internal server error');
    case 'timeout': {
      const error = new SkillTimeoutError(outcome.timeoutMs);
      callSafely(deps.logger, 'onError', () => deps.onError?.(name, error));
      return failure(504, error.message);
    }
    case 'invalid-output': {
      const error = new Error('Skill result does not match its outputSchema');
      callSafely(deps.logger, 'onError', () => deps.onError?.(name, error));
      return failure(
        500,
        deps.exposeErrors ? error.message : 'Internal server error',
        deps.exposeErrors ? { details: outcome.problems } : {},
      );
    }
    case 'ok':
      break;
  }

  const result = { success: true, result: outcome.result, timestamp: new Date(deps.now()).toISOString() };
  const mode = deps.exposure.reserve(name, payer, route.amount);
  let receipt: SettleResponse;
  try {
    receipt = await deps.facilitator.settle(payment, route.terms.requirements, resource, mode);
    if (mode === 'broadcast') {
      if (receipt.success) {
        deps.exposure.watch({
          skill: name,
          payment,
          requirements: route.terms.requirements,
          amount: route.amount,
          transaction: receipt.transaction,
        });
      } else deps.exposure.release(name, payer, route.amount);
    }
  } catch (error) {
    if (mode === 'broadcast') deps.exposure.release(name, payer, route.amount);
    // The settle may have reached the facilitator and moved the money: find out, keep the result.
    deps.logger.warn('settlement outcome unknown (facilitator unavailable); result held', { skill: name, error: errorText(error) });
    return { held: jsonAnswer(200, result), transaction: '' };
  }
  if (!receipt.success && receipt.errorReason === FACILITATOR_REASONS.settlementPending) {
    deps.logger.warn('settlement outcome unknown (pending); result held', { skill: name, transaction: receipt.transaction || undefined });
    return { held: jsonAnswer(200, result), transaction: receipt.transaction };
  }
  if (!receipt.success) {
    deps.logger.warn('settlement refused; result withheld', {
      skill: name,
      reason: receipt.errorReason,
      transaction: receipt.transaction || undefined,
    });
    deps.payers.refused(payer);
    return paymentRequired(route, receipt.errorReason ?? 'settlement_failed');
  }
  deps.payers.settled(payer);
  const settled = settledCall(route, receipt, payment.authorization);
  callSafely(deps.logger, 'call tracking', () => deps.onSettled?.(settled));
  return jsonAnswer(200, result, settleResponseHeaders(receipt));
}
