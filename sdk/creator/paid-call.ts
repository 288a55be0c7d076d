/**
 * One paid call, in the order that protects both sides: claim the proof (one proof, one run),
 * verify it with the facilitator, run the handler under its deadline, and only after a good
 * result settle the payment; the result leaves only with a settled payment.
 */
import { createHash } from 'node:crypto';
import {
  FACILITATOR_REASONS,
  formatPrice,
  paymentMatchesRequirements,
  paymentRequiredResponse,
  readPaymentHeader,
  sameAddress,
  settleResponseHeaders,
  type DecodedPayment,
  type PaymentTerms,
} from '../x402/index';
import { SkillTimeoutError } from './errors';
import type { FacilitatorClient } from './facilitator-client';
import { failure, jsonAnswer, toResponse, type StoredResponse } from './http';
import type { ProofLedger } from './ledger';
import { callSafely, errorText, type CreatorLogger } from './logger';
import { runHandler } from './run';
import type { Skill } from './skill';

/** Seconds an authorization must still be valid after the handler, for settlement to go through. */
const SETTLE_MARGIN_SECONDS = 8;

/** A skill ready to be sold: its definition and its payment terms. */
export interface SkillRoute {
  name: string;
  skill: Skill;
  terms: PaymentTerms;
  /** Price in the asset's atomic units. */
  amount: bigint;
}

/** A call whose payment went through, as call tracking and `onSettled` see it. */
export interface SettledCall {
  skill: string;
  /** Decimal USDC amount, e.g. `"0.001"`. */
  amount: string;
  payer: string;
  /** Settlement transaction hash. */
  transaction: string;
  network: string;
}

export interface PaidCallDeps {
  facilitator: FacilitatorClient;
  ledger: ProofLedger;
  logger: CreatorLogger;
  exposeErrors: boolean;
  now: () => number;
  onCall?: ((skillName: string, input: unknown) => unknown) | undefined;
  onError?: ((skillName: string, error: unknown) => unknown) | undefined;
  onSettled?: ((call: SettledCall) => void) | undefined;
}

/** The 402 answer of a route, as a storable response. */
export function paymentRequired(route: SkillRoute, error?: string): StoredResponse {
  const answer = paymentRequiredResponse(route.terms, error);
  return { status: answer.status, headers: answer.headers, body: JSON.stringify(answer.body) };
}

/** Handles `POST /<name>` once the input is known to be valid. */
export async function paidCall(deps: PaidCallDeps, route: SkillRoute, input: unknown, request: Request): Promise<Response> {
  const header = readPaymentHeader(request.headers);
  if (header.type === 'none') return toResponse(paymentRequired(route));
  if (header.type === 'error') return toResponse(paymentRequired(route, header.error.message));
  const payment = header.payment;
  const { requirements } = route.terms;
  const auth = payment.authorization;
  if (!paymentMatchesRequirements(payment, requirements) || !sameAddress(auth.to, requirements.payTo) || auth.value !== requirements.amount) {
    return toResponse(paymentRequired(route, 'The payment does not match the payment requirements of this skill'));
  }

  const key = [requirements.network, requirements.asset, auth.from, auth.nonce].join('|').toLowerCase();
  const claim = deps.ledger.claim(key, fingerprint(route.name, payment, input), BigInt(auth.validBefore));
  switch (claim.type) {
    case 'busy':
      return toResponse(failure(409, 'This payment is already being processed; retry shortly for its result', {}, { 'Retry-After': '1' }));
    case 'replay':
      return toResponse(claim.response, { 'X-Payment-Replayed': 'true' });
    case 'used':
      return toResponse(paymentRequired(route, FACILITATOR_REASONS.nonceAlreadyUsed));
    case 'full':
      return toResponse(failure(503, 'Too many payments in progress; retry shortly', {}, { 'Retry-After': '1' }));
    case 'claimed':
      break;
  }

  const resource = { url: route.terms.paymentRequired.resource.url, description: route.skill.description ?? '' };
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

  let answer: StoredResponse;
  try {
    answer = await runAndSettle(deps, route, payment, input, request, resource);
  } catch (error) {
    deps.logger.error('paid call failed', { skill: route.name, error: errorText(error) });
    answer = failure(500, 'Internal server error');
  }
  deps.ledger.complete(key, answer);
  return toResponse(answer);
}

async function runAndSettle(
  deps: PaidCallDeps,
  route: SkillRoute,
  payment: DecodedPayment,
  input: unknown,
  request: Request,
  resource: { url: string; description: string },
): Promise<StoredResponse> {
  const { name, skill } = route;
  const payer = payment.authorization.from;
  const secondsLeft = Number(BigInt(payment.authorization.validBefore) - BigInt(Math.floor(deps.now() / 1000))) - SETTLE_MARGIN_SECONDS;
  const timeoutMs = Math.min(skill.timeout, secondsLeft * 1000);
  if (timeoutMs <= 0) return paymentRequired(route, FACILITATOR_REASONS.validBefore);

  callSafely(deps.logger, 'onCall', () => deps.onCall?.(name, input));
  const outcome = await runHandler(skill, input, { skill: name, payer, request }, timeoutMs);
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
      return failure(500, deps.exposeErrors ? error.message : 'Internal server error', deps.exposeErrors ? { details: outcome.problems } : {});
    }
    case 'ok':
      break;
  }

  let receipt;
  try {
    receipt = await deps.facilitator.settle(payment, route.terms.requirements, resource);
  } catch (error) {
    deps.logger.warn('settlement failed: facilitator unavailable; result withheld', { skill: name, error: errorText(error) });
    return paymentRequired(route, 'settlement_failed');
  }
  if (!receipt.success) {
    deps.logger.warn('settlement refused; result withheld', { skill: name, reason: receipt.errorReason, transaction: receipt.transaction || undefined });
    return paymentRequired(route, receipt.errorReason ?? 'settlement_failed');
  }
  const settled: SettledCall = {
    skill: name,
    amount: formatPrice(route.amount, route.terms.asset.decimals),
    payer: receipt.payer ?? payer,
    transaction: receipt.transaction,
    network: receipt.network,
  };
  callSafely(deps.logger, 'call tracking', () => deps.onSettled?.(settled));
  return jsonAnswer(200, { success: true, result: outcome.result, timestamp: new Date(deps.now()).toISOString() }, settleResponseHeaders(receipt));
}

/** What makes a call "the same call": skill, signed authorization and input. */
function fingerprint(name: string, payment: DecodedPayment, input: unknown): string {
  const a = payment.authorization;
  return createHash('sha256')
    .update(JSON.stringify([name, payment.signature.toLowerCase(), a.from.toLowerCase(), a.to.toLowerCase(), a.value, a.validAfter, a.validBefore, a.nonce.toLowerCase(), input]))
    .digest('base64');
}
