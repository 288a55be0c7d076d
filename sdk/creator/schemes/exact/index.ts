/**
 * The `exact` scheme on the skill server: one EIP-3009 transfer of the price per call, in the order
 * that protects both sides: claim the proof (one proof, one run), verify it with the facilitator
 * (for a payer who already paid here: checked here and verified by the settle itself, see
 * payers.ts), run the handler under its deadline, and only after a good result settle the payment;
 * the result leaves only with a settled payment. When the settlement's outcome is unknown (its
 * answer lost, or pending), the result is held, not dropped, and so is the request: standard x402
 * clients send a paid request once and expect the result (or a 402), so it is answered as soon as
 * the outcome is found (settlement.ts), for up to `holdMs` — and, with the chain to read, until the
 * outcome is final: the transfer is mined, or the authorization expired unmined and can never be
 * (its validBefore, plus {@link FINAL_GRACE_MS}), at most {@link MAX_FINAL_HOLD_MS}. So a client
 * that reads one answer gets the result or a 402, never a 409 with its money gone. Only past that
 * bound does the client hear 409 `payment_pending`; a retry with the same proof then waits the
 * same way and gets the result once the transfer is confirmed. A copy of a proof that is being
 * processed waits for the first's answer in the same way.
 */
import {
  authorizationKey,
  FACILITATOR_REASONS,
  parsePaymentPayload,
  paymentFingerprint,
  paymentMatchesRequirements,
  sameAddress,
  settleResponseHeaders,
  X402Error,
  type DecodedPayment,
  type SettleResponse,
} from '../../../x402/index';
import type { FacilitatorClient } from '../../facilitator-client';
import { failure, jsonAnswer, pendingAnswer, type StoredResponse } from '../../http';
import { errorText, type CreatorLogger } from '../../logger';
import type { BaseRoute, PaidRequest, SchemeKit, ServerScheme } from '../../scheme';
import type { Exposure } from './exposure';
import type { ProofLedger } from './ledger';
import type { PayerTrust } from './payers';
import { settledCall, type HeldCall, type SettlementWatcher } from './settlement';

/** The scheme's id on the wire. */
const EXACT_SCHEME = 'exact';

/** Seconds an authorization must still be valid after the handler, for settlement to go through. */
const SETTLE_MARGIN_SECONDS = 8;

/** After an authorization's validBefore, how long until a block shows it expired and the watcher reads it. */
const FINAL_GRACE_MS = 15_000;
/** Longest a request is held for a final outcome: it must end before the server closes the connection (Bun: 255 s idle). */
export const MAX_FINAL_HOLD_MS = 240_000;

export interface ExactSchemeDeps {
  kit: SchemeKit;
  facilitator: FacilitatorClient;
  ledger: ProofLedger;
  /** Finds out the outcome of held calls. */
  settlements: SettlementWatcher;
  /** Settlement mode per call and the bound on unconfirmed value. */
  exposure: Exposure;
  /** Whose calls the facilitator verifies at settlement instead of before the handler. */
  payers: PayerTrust;
  logger: CreatorLogger;
  /** Longest a request waits for the open payment outcome of its call (or of a copy in progress), ms. */
  holdMs: number;
  /** Whether the watcher reads the chain, so it knows an outcome is final at validBefore: requests are then held until it is. */
  holdUntilFinal: boolean;
}

/** A result whose payment outcome is unknown: kept until it is known. */
interface Held {
  held: StoredResponse;
  transaction: string;
}

export function createExactScheme(deps: ExactSchemeDeps): ServerScheme {
  const { kit } = deps;

  /** How long a request waits for the open outcome of a payment valid until `validBefore` (unix seconds). */
  const holdFor = (validBefore: bigint) => {
    if (!deps.holdUntilFinal) return deps.holdMs;
    const untilFinal = Number(validBefore) * 1000 + FINAL_GRACE_MS - Date.now();
    return Math.min(MAX_FINAL_HOLD_MS, Math.max(deps.holdMs, untilFinal));
  };

  /**
   * Claims the proof; while a copy of it is being processed (`busy`) or its call's payment is still
   * open (`pending`), waits for that call's answer and claims again, for up to `holdMs` in all.
   */
  const claimOrWait = async (key: string, print: string, validBefore: bigint) => {
    const deadline = Date.now() + holdFor(validBefore);
    let claim = deps.ledger.claim(key, print, validBefore);
    while (claim.type === 'busy' || claim.type === 'pending') {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await deps.ledger.outcome(key, left);
      claim = deps.ledger.claim(key, print, validBefore);
    }
    return claim;
  };

  const runAndSettle = async (call: PaidRequest, payment: DecodedPayment, resource: { url: string; description: string }) => {
    const { route } = call;
    const { name } = route;
    const payer = payment.authorization.from;
    const secondsLeft = Number(BigInt(payment.authorization.validBefore) - BigInt(Math.floor(kit.now() / 1000))) - SETTLE_MARGIN_SECONDS;
    const timeoutMs = Math.min(route.skill.timeout, secondsLeft * 1000);
    if (timeoutMs <= 0) return kit.required(route, FACILITATOR_REASONS.validBefore);

    const run = await kit.run(call, { payer, timeoutMs, chargeable: false });
    if (run.type === 'failed') return run.response;

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
      return { held: jsonAnswer(200, run.body), transaction: '' } satisfies Held;
    }
    if (!receipt.success && receipt.errorReason === FACILITATOR_REASONS.settlementPending) {
      deps.logger.warn('settlement outcome unknown (pending); result held', { skill: name, transaction: receipt.transaction || undefined });
      return { held: jsonAnswer(200, run.body), transaction: receipt.transaction } satisfies Held;
    }
    if (!receipt.success) {
      deps.logger.warn('settlement refused; result withheld', {
        skill: name,
        reason: receipt.errorReason,
        transaction: receipt.transaction || undefined,
      });
      deps.payers.refused(payer);
      return kit.required(route, receipt.errorReason ?? 'settlement_failed');
    }
    deps.payers.settled(payer);
    const answer = await kit.paidAnswer(
      route,
      settledCall(route, receipt, payment.authorization),
      run.body,
      settleResponseHeaders(receipt),
    );
    kit.settled(answer.settled);
    return answer.response;
  };

  const pay = async (call: PaidRequest): Promise<StoredResponse> => {
    const { route, input } = call;
    let payment: DecodedPayment;
    try {
      payment = parsePaymentPayload(call.payload);
    } catch (error) {
      return kit.required(route, error instanceof X402Error ? error.message : 'Malformed payment payload');
    }
    const { requirements } = route.terms;
    const auth = payment.authorization;
    if (
      !paymentMatchesRequirements(payment, requirements) ||
      !sameAddress(auth.to, requirements.payTo) ||
      auth.value !== requirements.amount
    ) {
      return kit.required(route, 'The payment does not match the payment requirements of this skill');
    }

    const key = authorizationKey({ network: requirements.network, asset: requirements.asset, payer: auth.from, nonce: auth.nonce });
    // What makes a call "the same call": skill, signed authorization and input.
    const claim = await claimOrWait(key, paymentFingerprint(payment, [route.name, input]), BigInt(auth.validBefore));
    switch (claim.type) {
      case 'busy':
        return pendingAnswer('This payment is already being processed; retry with the same proof for its result');
      case 'pending':
        return pendingAnswer('Payment pending: the transfer is not confirmed yet; retry with the same proof for the result');
      case 'replay':
        return { ...claim.response, headers: { ...claim.response.headers, 'X-Payment-Replayed': 'true' } };
      case 'used':
        return kit.required(route, FACILITATOR_REASONS.nonceAlreadyUsed);
      case 'full':
        return failure(503, 'Too many payments in progress; retry shortly', {}, { 'Retry-After': '1' });
      case 'claimed':
        break;
    }
    const refusal = deps.exposure.refusal(auth.from);
    if (refusal) {
      deps.ledger.release(key);
      return kit.required(route, refusal);
    }

    const resource = { url: route.terms.paymentRequired.resource.url, description: route.skill.description ?? '' };
    // A payer who already paid here is verified by the settle itself (payers.ts); others first.
    const atSettlement = await deps.payers.take(payment, requirements, kit.now());
    if (!atSettlement) {
      try {
        const verdict = await deps.facilitator.verify(payment, requirements, resource);
        if (!verdict.isValid) {
          deps.ledger.release(key);
          return kit.required(route, verdict.invalidReason ?? 'invalid_payment');
        }
      } catch (error) {
        deps.ledger.release(key);
        deps.logger.warn('payment facilitator unavailable', { skill: route.name, error: errorText(error) });
        return kit.unavailable('Payment facilitator unavailable; nothing was charged');
      }
    }

    let answer: StoredResponse | Held;
    try {
      answer = await runAndSettle(call, payment, resource);
    } catch (error) {
      deps.logger.error('paid call failed', { skill: route.name, error: errorText(error) });
      answer = failure(500, 'Internal server error');
    } finally {
      if (atSettlement) deps.payers.release(auth.from);
    }
    if ('held' in answer) {
      deps.ledger.hold(key, answer.held);
      deps.settlements.watch({ key, route, payment, resource, transaction: answer.transaction } satisfies HeldCall);
      const final = await deps.ledger.outcome(key, holdFor(BigInt(auth.validBefore)));
      if (final) return final;
      return pendingAnswer('Payment pending: the settlement was sent but is not confirmed yet; retry with the same proof for the result');
    }
    deps.ledger.complete(key, answer);
    return answer;
  };

  return {
    id: EXACT_SCHEME,
    offer: (route: BaseRoute) => route.terms.requirements,
    // The EIP-3009 authorization's signer: the wallet a volume price was quoted to.
    quotedPayer: (payload) => {
      const from = (payload.payload as { authorization?: { from?: unknown } } | undefined)?.authorization?.from;
      return typeof from === 'string' ? from : undefined;
    },
    pay,
  };
}
