/**
 * One paid call, start to end: checks that need no server (active, network, endpoint, input,
 * price limits, wallet), the 402 exchange or the fast path, the terms check, budget reservation,
 * signing, sending the proof (re-sent as is on a lost answer, and while the server answers
 * "payment pending"), and reading the outcome. `charged` is never `'no'` when the authorization
 * may have been used: in doubt the chain is asked (with an RPC URL), else it is `'unknown'`.
 */
import {
  encodePaymentPayload,
  FACILITATOR_REASONS,
  PAYMENT_SIGNATURE_HEADER,
  sameAddress,
  signAuthorization,
  X_PAYMENT_HEADER,
  type AuthorizationStateReader,
  type Caip2Network,
  type Hex,
  type ResourceInfo,
  type TypedDataSigner,
} from '../x402/index';
import { failureOf, reasonOf, receiptOf, resultOf, type SentPayment } from './answer';
import { MarketError, TermsMismatchError, type ChargeState } from './errors';
import { exchange, isRecord, parseJson, type Answer } from '../http/exchange';
import { checkInput, checkSkill } from './preflight';
import { checkMaxPrice, type Reservation, type SpendingLedger } from './spending';
import { chooseTerms, listingTerms, readOfferedTerms, type ChosenTerms, type OfferedTerms, type TermsPolicy } from './terms';
import type { CallResult, FetchLike, PaymentMode, PaymentReceipt, Skill } from './types';

/** What a call needs from its client. */
export interface CallContext {
  lookup(slug: string, fresh: boolean, signal?: AbortSignal): Promise<{ skill: Skill; cached: boolean }>;
  signer: TypedDataSigner | undefined;
  ledger: SpendingLedger;
  policy: TermsPolicy;
  network: Caip2Network;
  maxPrice: bigint | undefined;
  allowHttp: boolean;
  fetch: FetchLike;
  retries: number;
  /** How long a proof is re-sent while the server answers "payment pending", ms. */
  pendingTimeoutMs: number;
  /** The chain, to tell whether an authorization was used when a server cannot. */
  chain: AuthorizationStateReader | undefined;
  /** Terms a server asked for before, per slug: fast mode reuses them while the listing agrees. */
  learned: Map<string, ChosenTerms>;
  /** Called once per paid call (usage records). */
  paid(receipt: PaymentReceipt, skill: Skill): void;
}

export interface CallSettings {
  mode: PaymentMode;
  maxPrice: bigint | undefined;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

/** One call; `run()` once. */
export class PaidCall<T> {
  private skill!: Skill;
  private cached = false;
  private signer!: TypedDataSigner;
  private fellBack = false;
  /** What this call holds of the budget right now. */
  private held = 0n;
  private readonly body: string;

  constructor(
    private readonly ctx: CallContext,
    private readonly slug: string,
    input: unknown,
    private readonly settings: CallSettings,
  ) {
    if (typeof slug !== 'string' || slug === '') throw new TypeError('call: slug must be a non-empty string');
    const body = JSON.stringify(input ?? {});
    if (body === undefined) throw new TypeError('call: input must be JSON-serializable');
    this.body = body;
  }

  async run(): Promise<CallResult<T>> {
    const { skill, cached } = await this.ctx.lookup(this.slug, false, this.settings.signal);
    await this.adopt(skill, cached);
    if (this.settings.mode === 'fast') {
      const learned = this.ctx.learned.get(this.slug);
      const chosen = (learned && this.stillValid(learned)) || listingTerms(this.skill, this.ctx.policy);
      if (chosen) return this.pay(chosen, { url: this.skill.endpoint }, this.reserve());
    }
    const first = await this.post(undefined);
    if (first.status !== 402) return this.outcome(first, undefined, undefined);
    const offered = readOfferedTerms(first, this.skill);
    const chosen = await this.choose(offered);
    this.ctx.learned.set(this.slug, chosen);
    return this.pay(chosen, offered.resource, this.reserve());
  }

  /** Takes a listing after every check that needs no answer from the skill server. */
  private async adopt(skill: Skill, cached: boolean): Promise<void> {
    checkSkill(skill, this.ctx.network, this.ctx.allowHttp);
    await checkInput(skill, this.body);
    checkMaxPrice(BigInt(skill.priceAtomic), skill.slug, this.ctx.maxPrice, this.settings.maxPrice);
    this.ctx.ledger.check(BigInt(skill.priceAtomic), skill.slug, this.held);
    if (!this.ctx.signer) {
      throw new MarketError(
        'wallet_required',
        `Calling ${skill.slug} needs a wallet: pass wallet (a private key or a viem account) to SkillMarket`,
        { slug: skill.slug },
      );
    }
    this.skill = skill;
    this.cached = cached;
    this.signer = this.ctx.signer;
  }

  private reserve(): Reservation {
    const reservation = this.ctx.ledger.reserve(BigInt(this.skill.priceAtomic), this.slug);
    this.held = reservation.amount;
    return reservation;
  }

  private post(proof: string | undefined): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    // Both names: the interface spec reads X-Payment, x402 v2 servers read PAYMENT-SIGNATURE.
    if (proof !== undefined) headers[X_PAYMENT_HEADER] = headers[PAYMENT_SIGNATURE_HEADER] = proof;
    return exchange(
      this.skill.endpoint,
      { method: 'POST', headers, body: this.body },
      {
        fetch: this.ctx.fetch,
        timeoutMs: this.settings.timeoutMs,
        retries: this.ctx.retries,
        signal: this.settings.signal,
        what: this.slug,
      },
    );
  }

  /** The offered terms that match the listing; a mismatch against a cached listing is re-checked against a fresh one. */
  private async choose(offered: OfferedTerms): Promise<ChosenTerms> {
    try {
      return chooseTerms(offered, this.skill, this.ctx.policy);
    } catch (error) {
      if (!(error instanceof TermsMismatchError) || !this.cached) throw error;
      const fresh = await this.ctx.lookup(this.slug, true, this.settings.signal);
      // Terms from one server are never paid to another endpoint.
      if (fresh.skill.endpoint !== this.skill.endpoint || !paymentFieldsChanged(this.skill, fresh.skill)) throw error;
      await this.adopt(fresh.skill, false);
      return chooseTerms(offered, this.skill, this.ctx.policy);
    }
  }

  private async pay(chosen: ChosenTerms, resource: ResourceInfo, reservation: Reservation, nonce?: Hex): Promise<CallResult<T>> {
    let sent: SentPayment;
    try {
      const payload = await signAuthorization(this.signer, chosen.requirements, nonce === undefined ? { resource } : { resource, nonce });
      sent = { requirements: chosen.requirements, payload };
    } catch (error) {
      reservation.release();
      throw error;
    }
    let answer: Answer;
    try {
      answer = await this.deliver(encodePaymentPayload(sent.payload));
    } catch (error) {
      // No (whole) answer to a sent proof: it may have been settled, so the money counts as spent.
      const charged = await this.chargedOnChain(sent, reservation);
      const code = error instanceof MarketError ? error.code : 'network_error';
      throw new MarketError(code, `${(error as Error).message}; the payment may have been settled`, {
        slug: this.slug,
        charged,
        cause: error,
        ...this.maybeReceipt(charged, sent),
      });
    }
    if (isPending(answer) || codeOf(answer) === 'payment_unresolved') {
      const charged = await this.chargedOnChain(sent, reservation);
      const why = isPending(answer)
        ? `its payment was still pending after ${this.ctx.pendingTimeoutMs} ms`
        : 'the server cannot determine its payment';
      throw new MarketError(
        'payment_pending',
        `${this.slug} ran the call but ${why}; retrying the same proof later may still get the result`,
        {
          status: answer.status,
          body: answer.text,
          slug: this.slug,
          charged,
          ...this.maybeReceipt(charged, sent),
        },
      );
    }
    if (answer.status === 402 && MAYBE_SPENT.has(reasonOf(answer) ?? '')) {
      // The authorization may be spent (a retried proof the server no longer knows, or a transfer
      // not seen in time): never "not charged" on the server's word alone.
      const charged = await this.chargedOnChain(sent, reservation);
      throw new MarketError(
        'payment_rejected',
        `${this.slug} refused the payment: ${reasonOf(answer)}; the authorization may have been used`,
        {
          status: 402,
          body: answer.text,
          slug: this.slug,
          charged,
          ...this.maybeReceipt(charged, sent),
        },
      );
    }
    if (answer.status === 402) return this.refused(answer, chosen, sent, reservation);
    return this.outcome(answer, sent, reservation);
  }

  /** Sends the proof; while the server answers "payment pending", sends the same proof again after Retry-After, within pendingTimeoutMs. */
  private async deliver(proof: string): Promise<Answer> {
    const deadline = Date.now() + this.ctx.pendingTimeoutMs;
    for (;;) {
      const answer = await this.post(proof);
      if (!isPending(answer)) return answer;
      const wait = retryAfterMs(answer);
      if (Date.now() + wait > deadline) return answer;
      await sleep(wait, this.settings.signal);
      if (this.settings.signal?.aborted)
        throw new MarketError('aborted', `${this.slug}: aborted by the caller while its payment was pending`, { slug: this.slug });
    }
  }

  /**
   * Settles the reservation of a call whose payment outcome the server did not tell: the chain's
   * word when there is an RPC (`used`: yes; expired unused: no), else `unknown` (counted as spent).
   */
  private async chargedOnChain(sent: SentPayment, reservation: Reservation): Promise<ChargeState> {
    const a = sent.payload.payload.authorization;
    const use = await this.ctx.chain
      ?.read({ asset: sent.requirements.asset, payer: a.from, nonce: a.nonce, validBefore: BigInt(a.validBefore) })
      .catch(() => undefined);
    const charged: ChargeState = use === 'used' ? 'yes' : use === 'expired' ? 'no' : 'unknown';
    if (charged === 'no') reservation.release();
    else reservation.commit();
    if (charged === 'yes') this.ctx.paid(receiptOf({ status: 0, headers: new Headers(), text: '' }, this.skill, sent).receipt, this.skill);
    return charged;
  }

  /** The receipt (without a transaction hash) of a payment the chain shows spent. */
  private maybeReceipt(charged: ChargeState, sent: SentPayment): { receipt?: PaymentReceipt } {
    return charged === 'yes' ? { receipt: receiptOf({ status: 0, headers: new Headers(), text: '' }, this.skill, sent).receipt } : {};
  }

  /**
   * A 402 to a proof. In fast mode, once: the server wants other terms than the listing-built
   * ones; if they too match the listing, sign them with the SAME EIP-3009 nonce, so at most one
   * of the two authorizations can ever settle. Otherwise the payment was refused (not charged).
   */
  private async refused(answer: Answer, chosen: ChosenTerms, sent: SentPayment, reservation: Reservation): Promise<CallResult<T>> {
    const mayFallBack = this.settings.mode === 'fast' && !this.fellBack;
    this.fellBack = true;
    let offered: OfferedTerms;
    try {
      offered = readOfferedTerms(answer, this.skill);
    } catch {
      reservation.release();
      throw this.rejected(answer, reasonOf(answer));
    }
    try {
      if (!mayFallBack) throw this.rejected(answer, offered.error);
      const next = await this.choose(offered);
      if (sameTerms(next, chosen)) throw this.rejected(answer, offered.error);
      if (!sameAddress(next.asset.address, chosen.asset.address)) {
        throw new MarketError('payment_rejected', `${this.slug} refused the proof and asks for another token: not re-signing`, {
          status: 402,
          body: answer.text,
          slug: this.slug,
        });
      }
      this.ctx.learned.set(this.slug, next);
      if (BigInt(this.skill.priceAtomic) !== reservation.amount) {
        reservation.release();
        reservation = this.reserve();
      }
      return await this.pay(next, offered.resource, reservation, sent.payload.payload.authorization.nonce);
    } catch (error) {
      reservation.release(); // a no-op when pay() already settled it
      throw error;
    }
  }

  private rejected(answer: Answer, reason: string | undefined): MarketError {
    return new MarketError('payment_rejected', `${this.slug} refused the payment${reason ? `: ${reason}` : ''}`, {
      status: 402,
      body: answer.text,
      slug: this.slug,
    });
  }

  /** The result of a non-402 answer, or its typed error; settles the reservation. */
  private outcome(answer: Answer, sent: SentPayment | undefined, reservation: Reservation | undefined): CallResult<T> {
    const paid = sent ? receiptOf(answer, this.skill, sent) : undefined;
    const ok = answer.status >= 200 && answer.status < 300;
    // After a proof: a 2xx is paid (confirmed by a receipt or not); an error is paid only with a receipt.
    const charged: ChargeState = !paid ? 'no' : paid.settled ? 'yes' : ok ? 'unknown' : 'no';
    if (charged === 'no') reservation?.release();
    else reservation?.commit();
    const receipt = charged === 'no' ? undefined : paid?.receipt;
    if (receipt) this.ctx.paid(receipt, this.skill);
    if (!ok) throw failureOf(answer, this.slug, charged, receipt);
    return { result: resultOf(answer, this.slug, charged, receipt) as T, receipt: receipt ?? null, skill: this.skill };
  }

  private stillValid(learned: ChosenTerms): ChosenTerms | undefined {
    try {
      return chooseTerms(
        { candidates: [learned.requirements], resource: { url: this.skill.endpoint }, error: undefined },
        this.skill,
        this.ctx.policy,
      );
    } catch {
      return undefined;
    }
  }
}

/** 402 reasons that do not mean "nothing moved": the authorization may be (or be about to be) spent. */
const MAYBE_SPENT = new Set<string>([FACILITATOR_REASONS.nonceAlreadyUsed, FACILITATOR_REASONS.settlementPending]);

/** The machine `code` of a JSON error body. */
function codeOf(answer: Answer): string | undefined {
  const parsed = parseJson(answer.text);
  return parsed.ok && isRecord(parsed.value) && typeof parsed.value.code === 'string' ? parsed.value.code : undefined;
}

/** "Payment pending, retry the same proof": 409 (or 202) `payment_pending`, or a 409 with Retry-After. */
function isPending(answer: Answer): boolean {
  if (answer.status !== 409 && answer.status !== 202) return false;
  return codeOf(answer) === 'payment_pending' || (answer.status === 409 && answer.headers.has('retry-after'));
}

/** Retry-After (seconds or an HTTP date) in ms, between 100 ms and 10 s; 1 s when absent. */
function retryAfterMs(answer: Answer): number {
  const raw = answer.headers.get('retry-after')?.trim() ?? '';
  const seconds = /^\d+$/.test(raw) ? Number(raw) * 1000 : Number.isNaN(Date.parse(raw)) ? 1000 : Date.parse(raw) - Date.now();
  return Math.min(10_000, Math.max(100, seconds));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function sameTerms(a: ChosenTerms, b: ChosenTerms): boolean {
  const x = a.requirements;
  const y = b.requirements;
  return (
    x.scheme === y.scheme &&
    x.network === y.network &&
    x.amount === y.amount &&
    sameAddress(x.asset, y.asset) &&
    sameAddress(x.payTo, y.payTo) &&
    x.maxTimeoutSeconds === y.maxTimeoutSeconds &&
    x.extra?.name === y.extra?.name &&
    x.extra?.version === y.extra?.version
  );
}

function paymentFieldsChanged(a: Skill, b: Skill): boolean {
  return a.priceAtomic !== b.priceAtomic || a.paymentAddress !== b.paymentAddress || a.network !== b.network;
}
