/**
 * Calls whose payment outcome is unknown: the handler ran, `/settle` was sent, but its answer was
 * lost (facilitator killed or unreachable, timeout) or said `settlement_pending`. The money may
 * have moved, so the result is neither sent nor thrown away: the ledger holds it (and the request,
 * for a while: paid-call.ts) and this watcher finds out what happened, from the facilitator
 * (`POST /settlements`, else `GET /settlements/…`) and, when it has an RPC, from the chain
 * (`authorizationState`). A settle the facilitator never got (it has no record of the
 * authorization, or only its verification) is sent again while the authorization is still valid:
 * never a second transfer, since the facilitator takes each authorization once and the token
 * spends its nonce once. A confirmed transfer releases the result to the waiting request or the
 * next retry of the same proof (and is reported to call tracking, once); a transfer that can no
 * longer happen leaves the proof dead (402 with the reason).
 */
import {
  FACILITATOR_REASONS,
  formatPrice,
  settleResponseHeaders,
  type AuthorizationStateReader,
  type DecodedPayment,
  type SettleResponse,
} from '../../../x402/index';
import type { FacilitatorClient, ResourceHint, SettlementOutcome } from '../../facilitator-client';
import { failure } from '../../http';
import type { ProofLedger } from './ledger';
import { callSafely, errorText, type CreatorLogger } from '../../logger';
import { paymentRequired } from '../../paid-call';
import type { SchemeKit, SettledCall, SkillRoute } from '../../scheme';
import { VALID_BEFORE_MARGIN_SECONDS } from './payers';
import { tierOf } from '../../plans/tiers';

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
  /** Adds the receipts to a released result's headers (the kit's `signBody`); none: released as held. */
  sign?: SchemeKit['signBody'] | undefined;
  now?: () => number;
  /** First look after this many ms, doubling up to `maxDelayMs`; default 500. */
  firstDelayMs?: number;
  /** Default 2000: a held request hears the outcome within about that long of the facilitator. */
  maxDelayMs?: number;
  /**
   * How long past the authorization's validBefore to keep asking while nobody can tell (the
   * facilitator unreachable, or still saying pending) before giving up: the result stays withheld, answered 502 `payment_unresolved`. Default 3 minutes: once
   * validBefore has passed no new transfer of the authorization can be mined, and our facilitator
   * turns a transaction it never saw mined into `failed` (dropped) 120 s after validBefore (its
   * reconciler's grace for nodes and clocks that disagree, checked every few seconds); the rest is
   * slack for that pass. Past it, asking again would not change the answer.
   */
  giveUpAfterMs?: number;
}

/**
 * A facilitator that never accepted an authorization cannot have moved it, and once it expired
 * nobody can; this long past validBefore (clocks differ, and a settle sent before may still be on
 * its way) its "never accepted" is final: nothing was charged. A facilitator that cannot tell
 * will not know better later either: the outcome is then left unresolved.
 */
const NEVER_ACCEPTED_FINAL_MS = 60_000;

export interface SettlementWatcher {
  /** Starts finding out the outcome of a call the ledger holds. */
  watch(call: HeldCall): void;
  /** Calls being watched. */
  readonly watching: number;
}

type Verdict =
  | { type: 'confirmed'; transaction: string }
  | { type: 'failed'; reason: string }
  /** Nobody can tell, and waiting will not change that. */
  | { type: 'unresolved' }
  | { type: 'wait' };

const WAIT: Verdict = { type: 'wait' };

export function createSettlementWatcher(options: SettlementWatcherOptions): SettlementWatcher {
  const { facilitator, ledger, logger, chain } = options;
  const now = options.now ?? Date.now;
  const firstDelayMs = options.firstDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 2000;
  const giveUpAfterMs = options.giveUpAfterMs ?? 3 * 60_000;
  let watching = 0;
  /** Calls whose settle, sent again, found the authorization taken: its outcome is coming, never send it again. */
  const taken = new WeakSet<HeldCall>();

  /** The facilitator's word, or undefined when it cannot be reached. */
  const ask = async (call: HeldCall): Promise<SettlementOutcome | undefined> => {
    const { requirements } = call.route.terms;
    const { from, nonce } = call.payment.authorization;
    const told = await facilitator.settlements([{ requirements, payer: from, nonce }]).catch(() => undefined);
    return told?.[0];
  };

  /** Whether it is `ms` past the authorization's validBefore. */
  const past = (call: HeldCall, ms: number) => now() > Number(call.payment.authorization.validBefore) * 1000 + ms;
  /** Whether a facilitator still accepts the authorization for a settlement (its validBefore margin). */
  const stillValid = (call: HeldCall) => !past(call, -VALID_BEFORE_MARGIN_SECONDS * 1000);

  /**
   * Settle again a payment whose settle the facilitator never got (or never took): confirmed, so
   * its success means mined. A copy of the first settle arriving late finds the authorization taken.
   */
  const settleAgain = async (call: HeldCall): Promise<Verdict> => {
    let receipt: SettleResponse;
    try {
      receipt = await facilitator.settle(call.payment, call.route.terms.requirements, call.resource, 'confirmed');
    } catch {
      return WAIT;
    }
    if (receipt.success) return { type: 'confirmed', transaction: receipt.transaction };
    if (receipt.transaction) call.transaction = receipt.transaction;
    const reason = receipt.errorReason ?? 'settlement_failed';
    // Pending, or claimed meanwhile by the first settle arriving late: the outcome is still coming.
    if (reason === FACILITATOR_REASONS.nonceAlreadyUsed) taken.add(call);
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
    // Verified but never settled; or not known there at all (the settle never reached it, e.g. it
    // was down): settle again while the authorization can still be. A facilitator that cannot
    // tell (`unknown`) may have sent it: a second send then fails on the used nonce, nothing more.
    const unsent = told?.status === 'unsettled' || told?.status === 'none' || told?.status === 'unknown';
    if (unsent && !taken.has(call) && (told.status === 'unsettled' || stillValid(call))) {
      const verdict = await settleAgain(call);
      if (verdict.type !== 'wait') return verdict;
    }
    const use = await onChain(call);
    // The chain has the last word: a used authorization moved the money, whoever sent it.
    if (use === 'used') return { type: 'confirmed', transaction: call.transaction };
    if (told?.status === 'failed') return { type: 'failed', reason: told.reason ?? 'settlement_failed' };
    if (use === 'expired') return { type: 'failed', reason: FACILITATOR_REASONS.validBefore };
    if (past(call, NEVER_ACCEPTED_FINAL_MS)) {
      // Expired: what the facilitator says now, it will keep saying.
      if (told?.status === 'none') return { type: 'failed', reason: FACILITATOR_REASONS.validBefore };
      if (told?.status === 'unknown') return { type: 'unresolved' };
    }
    return WAIT;
  };

  const finish = async (call: HeldCall, verdict: Extract<Verdict, { type: 'confirmed' | 'failed' }>) => {
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
    const headers = { ...held.headers, ...settleResponseHeaders(receipt) };
    const answer = options.sign
      ? await options.sign(route, settledCall(route, receipt, a), held.body, headers)
      : { headers, settled: settledCall(route, receipt, a) };
    ledger.complete(key, { ...held, headers: answer.headers });
    logger.info('payment confirmed; held result released', { skill: route.name, payer: a.from, transaction: verdict.transaction });
    callSafely(logger, 'call tracking', () => options.onSettled?.(answer.settled));
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
          if (verdict.type === 'confirmed' || verdict.type === 'failed') {
            // Counted as watched until its answer is complete (a released result is signed first).
            return finish(call, verdict).finally(() => watching--);
          }
          if (verdict.type === 'unresolved' || past(call, giveUpAfterMs)) {
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

/** The report of a settled `exact` payment: the price, in the transaction the facilitator named. */
export function settledCall(route: SkillRoute, receipt: SettleResponse, authorization: { from: string; nonce: string }): SettledCall {
  return {
    skill: route.name,
    scheme: 'exact',
    amount: formatPrice(route.amount, route.terms.asset.decimals),
    amountAtomic: route.amount.toString(),
    payer: receipt.payer ?? authorization.from,
    transaction: receipt.transaction,
    nonce: authorization.nonce,
    network: receipt.network,
    // The route is the payer's tier route when its payment was for the tier price.
    ...tierField(tierOf(route.skill, route.amount, route.terms.asset.decimals)),
  };
}

const tierField = (tier: number | undefined) => (tier === undefined ? {} : { tier });
