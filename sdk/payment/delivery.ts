/**
 * Getting one request (with its proof, the same one every time) through to an answer: sent
 * again after no answer (exchange), after a 503 with Retry-After (nothing charged yet), and while
 * the server answers "payment pending", each within its bounds. Never a new signature.
 */
import { MarketError } from '../http/errors';
import { exchange, type Answer, type FetchLike } from '../http/exchange';
import { sleep } from '../http/wait';
import { PAYMENT_SIGNATURE_HEADER, SIWX_HEADER, X_PAYMENT_HEADER } from '../x402/index';
import { isPending, pendingWaitMs, unavailableWaitMs } from './doubt';

/** Where and how a call's requests go. */
export interface DeliveryOptions {
  endpoint: string;
  body: string;
  /** For messages: the skill's slug. */
  slug: string;
  fetch: FetchLike;
  timeoutMs: number;
  /** Resends of a request that got no answer. */
  retries: number;
  signal: AbortSignal | undefined;
  /** How long a proof is re-sent while the server answers "payment pending", ms. */
  pendingTimeoutMs: number;
  /** Retries of a 503 with Retry-After, and the most they may wait in total, ms. */
  unavailable: { retries: number; maxWaitMs: number };
}

export class Delivery {
  /** A proof went out more than once for want of an answer: an earlier send may have been settled. */
  resent = false;

  constructor(private readonly options: DeliveryOptions) {}

  /**
   * One POST (with `proof`, the same one every time), sent again after a 503 with Retry-After,
   * at most `unavailable.retries` times and `unavailable.maxWaitMs` in all.
   */
  async post(proof: string | undefined, signIn?: string): Promise<Answer> {
    let waited = 0;
    for (let retry = 0; ; retry++) {
      const answer = await this.send(proof, signIn);
      const wait = unavailableWaitMs(answer);
      const { retries, maxWaitMs } = this.options.unavailable;
      if (wait === undefined || retry >= retries || waited + wait > maxWaitMs) return answer;
      await this.pause(wait, 'while the skill server was unavailable');
      waited += wait;
    }
  }

  /** Sends the proof; while the server answers "payment pending", sends the same proof again after Retry-After, within pendingTimeoutMs. */
  async deliver(proof: string): Promise<Answer> {
    const deadline = Date.now() + this.options.pendingTimeoutMs;
    for (;;) {
      const answer = await this.post(proof);
      if (!isPending(answer)) return answer;
      const wait = pendingWaitMs(answer);
      if (Date.now() + wait > deadline) return answer;
      await this.pause(wait, 'while its payment was pending');
    }
  }

  /** Waits `ms` unless the caller aborts. */
  async pause(ms: number, why: string): Promise<void> {
    const { signal, slug } = this.options;
    await sleep(ms, signal);
    if (signal?.aborted) throw new MarketError('aborted', `${slug}: aborted by the caller ${why}`, { slug });
  }

  /** `signIn`: a signed x402 sign-in (`SIGN-IN-WITH-X`) asking for a free trial call instead of a payment. */
  private async send(proof: string | undefined, signIn?: string): Promise<Answer> {
    const { endpoint, body, fetch, timeoutMs, retries, signal, slug } = this.options;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    // Both names: the marketplace's first clients send X-Payment, x402 v2 servers read PAYMENT-SIGNATURE.
    if (proof !== undefined) headers[X_PAYMENT_HEADER] = headers[PAYMENT_SIGNATURE_HEADER] = proof;
    if (signIn !== undefined) headers[SIWX_HEADER] = signIn;
    let sends = 0;
    const answer = await exchange(
      endpoint,
      { method: 'POST', headers, body },
      {
        fetch: (input, init) => {
          sends++;
          return fetch(input, init);
        },
        timeoutMs,
        retries,
        signal,
        what: slug,
      },
    );
    // exchange() sends again only when an attempt got no (whole) answer.
    if (proof !== undefined && sends > 1) this.resent = true;
    return answer;
  }
}
