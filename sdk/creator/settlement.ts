/**
 * Calls whose payment outcome is unknown: the handler ran, `/settle` was sent, but its answer was
 * lost (facilitator killed or unreachable, timeout) or said `settlement_pending`. The money may
 * have moved, so the result is neither sent nor thrown away: the ledger holds it and this watcher
 * finds out what happened, from the facilitator (`GET /settlements/…`; a settle that never reached
 * it is asked again) and, when it has an RPC, from the chain (`authorizationState`). A confirmed
 * transfer releases the result to the next retry of the same proof (and is reported to call
 * tracking, once); a transfer that can no longer happen leaves the proof dead (402 with the reason).
 */
import {
  FACILITATOR_REASONS,
  settleResponseHeaders,
  type AuthorizationStateReader,
  type DecodedPayment,
  type SettleResponse,
} from '../x402/index';
import type { FacilitatorClient, ResourceHint, SettlementOutcome } from './facilitator-client';
import { failure } from './http';
import type { ProofLedger } from './ledger';
import { callSafely, errorText, type CreatorLogger } from './logger';
import { paymentRequired, settledCall, type SettledCall, type SkillRoute } from './paid-call';

/** A held call: what is needed to ask about its payment and to finish it. */
export interface HeldCall {
  key: string;
  route: SkillRoute;
  payment: DecodedPayment;
  resource: ResourceHint;
  /** The settlement transaction, when the facilitator named one. */
  transaction: string;
}

export interface SettlementWatcherOptions {
  facilitator: FacilitatorClient;
  ledger: ProofLedger;
  logger: CreatorLogger;
  /** The chain, when the skill server was given an RPC URL. */
  chain?: AuthorizationStateReader | undefined;
  onSettled?: ((call: SettledCall) => void) | undefined;
  now?: () => number;
  /** First look after this many ms, doubling up to `maxDelayMs`; default 500. */
  firstDelayMs?: number;
  /** Default 5000. */
  maxDelayMs?: number;
  /**
   * How long past the authorization's validBefore to keep asking before giving up (the result
   * stays withheld, answered 502 `payment_unresolved`); default 10 minutes, longer than our
   * facilitator takes to declare an unseen transaction dropped.
   */
  giveUpAfterMs?: number;
}

export interface SettlementWatcher {
  /** Starts finding out the outcome of a call the ledger holds. */
  watch(call: HeldCall): void;
  /** Calls being watched. */
  readonly watching: number;
}

type Verdict = { type: 'confirmed'; transaction: string } | { type: 'failed'; reason: string } | { type: 'wait' };

const WAIT: Verdict = { type: 'wait' };

export function createSettlementWatcher(options: SettlementWatcherOptions): SettlementWatcher {
  const { facilitator, ledger, logger, chain } = options;
  const now = options.now ?? Date.now;
  const firstDelayMs = options.firstDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 5000;
  const giveUpAfterMs = options.giveUpAfterMs ?? 10 * 60_000;
  let watching = 0;

  /** The facilitator's word, or undefined when it cannot be reached. */
  const ask = (call: HeldCall): Promise<SettlementOutcome | undefined> =>
    facilitator
      .settlement(call.route.terms.requirements, call.payment.authorization.from, call.payment.authorization.nonce)
      .catch(() => undefined);

  /** Settle again a payment the facilitator verified but never got (or never took) the settle of. */
  const settleAgain = async (call: HeldCall): Promise<Verdict> => {
    let receipt: SettleResponse;
    try {
      receipt = await facilitator.settle(call.payment, call.route.terms.requirements, call.resource);
    } catch {
      return WAIT;
    }
    if (receipt.success) return { type: 'confirmed', transaction: receipt.transaction };
    if (receipt.transaction) call.transaction = receipt.transaction;
    const reason = receipt.errorReason ?? 'settlement_failed';
    // Pending, or claimed meanwhile by the first settle arriving late: the outcome is still coming.
    if (reason === FACILITATOR_REASONS.settlementPending || reason === FACILITATOR_REASONS.nonceAlreadyUsed) return WAIT;
    return { type: 'failed', reason };
  };

  const onChain = async (call: HeldCall) => {
    if (!chain) return undefined;
    const a = call.payment.authorization;
    const { asset } = call.route.terms.requirements;
    return chain.read({ asset, payer: a.from, nonce: a.nonce, validBefore: BigInt(a.validBefore) }).catch((error: unknown) => {
      logger.warn('settlement check: the chain cannot be read', { skill: call.route.name, error: errorText(error) });
      return undefined;
    });
  };

  const look = async (call: HeldCall): Promise<Verdict> => {
    const told = await ask(call);
    if (told?.transaction) call.transaction = told.transaction;
    if (told?.status === 'settled') return { type: 'confirmed', transaction: call.transaction };
    if (told?.status === 'unsettled') {
      const verdict = await settleAgain(call);
      if (verdict.type !== 'wait') return verdict;
    }
    const use = await onChain(call);
    // The chain has the last word: a used authorization moved the money, whoever sent it.
    if (use === 'used') return { type: 'confirmed', transaction: call.transaction };
    if (told?.status === 'failed') return { type: 'failed', reason: told.reason ?? 'settlement_failed' };
    if (use === 'expired') return { type: 'failed', reason: FACILITATOR_REASONS.validBefore };
    return WAIT;
  };

  const finish = (call: HeldCall, verdict: Exclude<Verdict, { type: 'wait' }>) => {
    const { route, key } = call;
    const a = call.payment.authorization;
    if (verdict.type === 'failed') {
      logger.warn('payment failed after all; result withheld', {
        skill: route.name,
        payer: a.from,
        reason: verdict.reason,
        transaction: call.transaction || undefined,
      });
      ledger.complete(key, paymentRequired(route, verdict.reason));
      return;
    }
    const held = ledger.held(key);
    if (!held) return;
    const receipt: SettleResponse = {
      success: true,
      transaction: verdict.transaction,
      network: route.terms.requirements.network,
      payer: a.from,
    };
    ledger.complete(key, { ...held, headers: { ...held.headers, ...settleResponseHeaders(receipt) } });
    logger.info('payment confirmed; result released to the retry', { skill: route.name, payer: a.from, transaction: verdict.transaction });
    const settled = settledCall(route, receipt, a.from);
    callSafely(logger, 'call tracking', () => options.onSettled?.(settled));
  };

  const giveUp = (call: HeldCall) => {
    logger.error('payment outcome unknown; result withheld', {
      skill: call.route.name,
      payer: call.payment.authorization.from,
      transaction: call.transaction || undefined,
    });
    ledger.complete(
      call.key,
      failure(502, 'The outcome of this payment could not be determined; the result is withheld', {
        code: 'payment_unresolved',
        charged: 'unknown',
      }),
    );
  };

  const schedule = (call: HeldCall, delay: number) => {
    const timer = setTimeout(() => {
      void look(call)
        .catch((error: unknown) => {
          logger.warn('settlement check failed', { skill: call.route.name, error: errorText(error) });
          return WAIT;
        })
        .then((verdict) => {
          if (verdict.type !== 'wait') {
            watching--;
            return finish(call, verdict);
          }
          if (now() > Number(call.payment.authorization.validBefore) * 1000 + giveUpAfterMs) {
            watching--;
            return giveUp(call);
          }
          schedule(call, Math.min(delay * 2, maxDelayMs));
        });
    }, delay);
    (timer as { unref?: () => void }).unref?.();
  };

  return {
    watch(call) {
      watching++;
      schedule(call, firstDelayMs);
    },
    get watching() {
      return watching;
    },
  };
}
