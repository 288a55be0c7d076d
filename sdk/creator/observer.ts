/**
 * What a skill server tells an observer (`serve({ observe })`): each paid request's outcome and each
 * claim or settle of its payment channels. The CLI counts them as Prometheus metrics; the SDK
 * keeps no metrics library of its own.
 */

/** One `POST /<skill>` answered. */
export interface ObservedCall {
  skill: string;
  /** The scheme the payment named (`exact`, `batch-settlement`); `none` without a payment the route takes. */
  scheme: string;
  network: string;
  /** `paid`: answered and charged; `refused`: no result, nothing charged; `failed`: the handler failed (nothing charged). */
  outcome: 'paid' | 'refused' | 'failed';
  /**
   * Refused: an x402 reason code (`invalid_payment` for other words), `payment_required` (no payment),
   * `payment_pending` (409), `unavailable` (5xx). Failed: `error`, `timeout` or `invalid_output`. Paid: `none`.
   */
  reason: string;
  /** Paid: what was charged, in the token's atomic units; else 0. */
  amount: bigint;
  /** From the paid call's start to its answer. */
  seconds: number;
}

/** One claim or settle of payment channels sent to the facilitator. */
export interface ObservedSettlement {
  type: 'claim' | 'settle';
  outcome: 'ok' | 'failed';
}

/** The payment channels' vouchers not yet money, read when asked (`SkillServer.channelBacklog()`). */
export interface ChannelBacklog {
  /** Channels charged beyond what was claimed on chain. */
  claimsDue: number;
  /** Age of the oldest unclaimed charge, seconds; 0 when none. */
  oldestClaimSeconds: number;
  /** Charged and not yet claimed, atomic units, all channels together. */
  unclaimed: bigint;
  /** A claim round is under way. */
  claiming: boolean;
  /** Seconds claimed money has waited for a settle; 0 when none waits. */
  unsettledSeconds: number;
}

/** `serve({ observe })`: told of each paid call and channel settlement; what it throws is ignored. */
export interface ServerObserver {
  call?(call: ObservedCall): void;
  settlement?(settlement: ObservedSettlement): void;
}

/** How a handler run ended, by request (the pipeline's record for its observer). */
export type RunMarks = WeakMap<Request, { charged: bigint } | { failed: 'error' | 'timeout' | 'invalid_output' }>;

const CODE = /^[a-z][a-z0-9_]{0,99}$/;

/** The outcome and reason of an answer to a paid call. */
export function outcomeOf(
  status: number,
  body: string,
  mark: ReturnType<RunMarks['get']>,
): Pick<ObservedCall, 'outcome' | 'reason' | 'amount'> {
  if (mark && 'failed' in mark) return { outcome: 'failed', reason: mark.failed, amount: 0n };
  if (status === 200 && mark) return { outcome: 'paid', reason: 'none', amount: mark.charged };
  let reason = status === 409 ? 'payment_pending' : status >= 500 ? 'unavailable' : 'invalid_payment';
  if (status === 402) {
    let error: unknown;
    try {
      error = (JSON.parse(body) as { error?: unknown }).error;
    } catch {
      error = '';
    }
    reason = error === undefined ? 'payment_required' : typeof error === 'string' && CODE.test(error) ? error : 'invalid_payment';
  }
  return { outcome: 'refused', reason, amount: 0n };
}
