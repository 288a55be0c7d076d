/**
 * Answers to a payment proof that leave the payment open. The authorization may have been (or
 * may still be) used although the answer does not confirm it, so `charged` is never `'no'` on
 * such an answer: the chain is asked when there is an RPC, else the call reports `'unknown'`
 * and its price stays counted against the budget.
 */
import type { MarketErrorCode } from '../http/errors';
import { isRecord, parseJson, type Answer } from '../http/exchange';
import { retryAfterMs } from '../http/wait';
import { readSettleResponseHeader } from '../x402/index';
import { failedSettlementOf, reasonOf } from './answer';
import type { PaymentScheme } from './scheme';

/** Why a payment stays open, as the call's error states it. */
export interface Doubt {
  code: MarketErrorCode;
  /** Completes "<slug> …". */
  message: string;
}

/**
 * The doubt an answer leaves about its payment, or undefined when the answer settles the
 * question (a 2xx, a plain refusal, a handler error before settlement).
 *
 * A 402 whose reason is one of the scheme's `maybeSpentReasons` (for `exact`: the nonce was used
 * already, the transfer was sent but not seen in time) does not mean nothing moved. A 402 with a
 * failed settlement receipt (`PAYMENT-RESPONSE`, `success: false`) came after the server tried to
 * settle: unless its reason is one of the scheme's `nothingMovedReasons`, the transfer may have
 * been sent.
 *
 * `resent`: the proof went out more than once because an earlier send got no answer. That send
 * may have been settled, so then no refusal and no error answer can prove that nothing moved:
 * a server without replay memory refuses the used authorization (nonce used, or, on a stack that
 * checks no nonce before settling, a failed transfer or a balance the first transfer emptied).
 */
export function doubtOf(answer: Answer, resent: boolean, pendingTimeoutMs: number, scheme: PaymentScheme): Doubt | undefined {
  if (isPending(answer)) {
    return {
      code: 'payment_pending',
      message: `ran the call but its payment was still pending after ${pendingTimeoutMs} ms; retrying the same proof later may still get the result`,
    };
  }
  if (codeOf(answer) === 'payment_unresolved') {
    return {
      code: 'payment_pending',
      message: 'ran the call but the server cannot determine its payment; retrying the same proof later may still get the result',
    };
  }
  const reason = reasonOf(answer);
  if (answer.status === 402 && scheme.maybeSpentReasons.has(reason ?? '')) {
    return { code: 'payment_rejected', message: `refused the payment: ${reason}; the authorization may have been used` };
  }
  const settlement = answer.status === 402 ? failedSettlementOf(answer) : undefined;
  if (settlement && !scheme.nothingMovedReasons.has(settlement.reason ?? '')) {
    return {
      code: 'payment_rejected',
      message: `could not confirm its settlement of the payment${settlement.reason ? ` (${settlement.reason})` : ''}; the transfer may have been sent`,
    };
  }
  if (answer.status === 402 && resent) {
    return {
      code: 'payment_rejected',
      message: `refused the re-sent payment${reason ? `: ${reason}` : ''}; the answer to its first send was lost, so the authorization may have been used`,
    };
  }
  return undefined;
}

/**
 * Whether an error answer (not 2xx, not 402) to a proof may come after a settlement: after a lost
 * answer (see {@link doubtOf}), or a 502, which the reference x402 servers answer when their
 * facilitator fails, at verification or at settlement alike.
 */
export function errorMayBePaid(answer: Answer, resent: boolean): boolean {
  return resent || answer.status === 502;
}

/**
 * A 503 that asks to come back later (Retry-After) before anything was charged: the wait in ms,
 * else undefined. A 503 carrying a successful settlement receipt is not one.
 */
export function unavailableWaitMs(answer: Answer): number | undefined {
  if (answer.status !== 503) return undefined;
  const read = readSettleResponseHeader(answer.headers);
  if (read.type === 'receipt' && read.receipt.success) return undefined;
  return retryAfterMs(answer.headers.get('retry-after'));
}

/** "Payment pending, retry the same proof": 409 (or 202) `payment_pending`, or a 409 with Retry-After. */
export function isPending(answer: Answer): boolean {
  if (answer.status !== 409 && answer.status !== 202) return false;
  return codeOf(answer) === 'payment_pending' || (answer.status === 409 && answer.headers.has('retry-after'));
}

/** Retry-After of a pending answer in ms, between 100 ms and 10 s; 1 s when absent. */
export function pendingWaitMs(answer: Answer): number {
  return Math.min(10_000, Math.max(100, retryAfterMs(answer.headers.get('retry-after')) ?? 1000));
}

/** The machine `code` of a JSON error body. */
function codeOf(answer: Answer): string | undefined {
  const parsed = parseJson(answer.text);
  return parsed.ok && isRecord(parsed.value) && typeof parsed.value.code === 'string' ? parsed.value.code : undefined;
}
