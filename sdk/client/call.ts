/**
 * One paid call, start to end: checks that need no server (active, network, endpoint, input,
 * price limits, wallet), the 402 exchange or the fast path, the terms check, budget reservation,
 * signing, sending the proof (re-sent as is on a lost answer, while the server answers
 * "payment pending", and after a 503 with Retry-After), and reading the outcome. `charged` is
 * never `'no'` when the authorization may have been used (doubt.ts): then the chain is asked
 * (with an RPC URL), else it is `'unknown'`, and the price stays counted against the budget.
 */
import {
  encodePaymentPayload,
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
import { failureOf, paymentReceipt, reasonOf, receiptOf, resultOf, type SentPayment } from './answer';
import { doubtOf, errorMayBePaid, isPending, pendingWaitMs, unavailableWaitMs } from './doubt';
import { MarketError, TermsMismatchError, type ChargeState } from './errors';
import { exchange, type Answer } from '../http/exchange';
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
  /** Retries of a 503 with Retry-After, and the most they may wait in total, ms. */
  unavailable: { retries: number; maxWaitMs: number };
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
  /** A proof went out more than once for want of an answer: an earlier send may have been settled. */
  private resent = false;
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

  /**
   * One POST (with `proof`, the same one every time), sent again after a 503 with Retry-After
   * (nothing charged yet), at most `unavailable.retries` times and `unavailable.maxWaitMs` in all.
   */
  private async post(proof: string | undefined): Promise<Answer> {
    let waited = 0;
    for (let retry = 0; ; retry++) {
      const answer = await this.send(proof);
      const wait = unavailableWaitMs(answer);
      const { retries, maxWaitMs } = this.ctx.unavailable;
      if (wait === undefined || retry >= retries || waited + wait > maxWaitMs) return answer;
      await this.pause(wait, 'while the skill server was unavailable');
      waited += wait;
    }
  }

  private async send(proof: string | undefined): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    // Both names: the interface spec reads X-Payment, x402 v2 servers read PAYMENT-SIGNATURE.
    if (proof !== undefined) headers[X_PAYMENT_HEADER] = headers[PAYMENT_SIGNATURE_HEADER] = proof;
    let sends = 0;
    const answer = await exchange(
      this.skill.endpoint,
      { method: 'POST', headers, body: this.body },
      {
        fetch: (input, init) => {
          sends++;
          return this.ctx.fetch(input, init);
        },
        timeoutMs: this.settings.timeoutMs,
        retries: this.ctx.retries,
        signal: this.settings.signal,
        what: this.slug,
      },
    );
    // exchange() sends again only when an attempt got no (whole) answer.
    if (proof !== undefined && sends > 1) this.resent = true;
    return answer;
  }

  private async pause(ms: number, why: string): Promise<void> {
    await sleep(ms, this.settings.signal);
    if (this.settings.signal?.aborted) throw new MarketError('aborted', `${this.slug}: aborted by the caller ${why}`, { slug: this.slug });
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
      const { charged, receipt } = await this.onChain(sent, reservation);
      const code = error instanceof MarketError ? error.code : 'network_error';
      throw new MarketError(code, `${(error as Error).message}; the payment may have been settled`, {
        slug: this.slug,
        charged,
        cause: error,
        ...(receipt ? { receipt } : {}),
      });
    }
    const doubt = doubtOf(answer, this.resent, this.ctx.pendingTimeoutMs);
    if (doubt) {
      const { charged, receipt } = await this.onChain(sent, reservation);
      throw new MarketError(doubt.code, `${this.slug} ${doubt.message}`, {
        status: answer.status,
        body: answer.text,
        slug: this.slug,
        charged,
        ...(receipt ? { receipt } : {}),
      });
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
      const wait = pendingWaitMs(answer);
      if (Date.now() + wait > deadline) return answer;
      await this.pause(wait, 'while its payment was pending');
    }
  }

  /**
   * What the chain says of a payment the server's answer left open, settling the reservation by
   * it: used → `yes` (with the transaction that used it when found), expired unused → `no`
   * (released), anything else or no RPC → `unknown` (counted as spent).
   */
  private async onChain(sent: SentPayment, reservation: Reservation): Promise<{ charged: ChargeState; receipt?: PaymentReceipt }> {
    const a = sent.payload.payload.authorization;
    const query = { asset: sent.requirements.asset, payer: a.from, nonce: a.nonce, validBefore: BigInt(a.validBefore) };
    const chain = this.ctx.chain;
    const use = await chain?.read(query).catch(() => undefined);
    const charged: ChargeState = use === 'used' ? 'yes' : use === 'expired' ? 'no' : 'unknown';
    if (charged !== 'yes') {
      this.account(reservation, charged, undefined);
      return { charged };
    }
    const transaction = (await chain?.usedIn?.(query).catch(() => undefined)) ?? null;
    const receipt = paymentReceipt(this.skill, sent, transaction);
    this.account(reservation, charged, receipt);
    return { charged, receipt };
  }

  /** Ends the call's hold on the budget (released only when certainly not charged) and records a paid call. */
  private account(reservation: Reservation | undefined, charged: ChargeState, receipt: PaymentReceipt | undefined): void {
    if (charged === 'no') reservation?.release();
    else reservation?.commit();
    if (receipt && charged !== 'no') this.ctx.paid(receipt, this.skill);
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
  private async outcome(answer: Answer, sent: SentPayment | undefined, reservation: Reservation | undefined): Promise<CallResult<T>> {
    const paid = sent ? receiptOf(answer, this.skill, sent) : undefined;
    const ok = answer.status >= 200 && answer.status < 300;
    let charged: ChargeState;
    let receipt: PaymentReceipt | undefined;
    if (sent && reservation && paid && !ok && !paid.settled && errorMayBePaid(answer, this.resent)) {
      ({ charged, receipt } = await this.onChain(sent, reservation));
    } else {
      // After a proof: a 2xx is paid (confirmed by a receipt or not); an error is paid only with a receipt.
      charged = !paid ? 'no' : paid.settled ? 'yes' : ok ? 'unknown' : 'no';
      receipt = charged === 'no' ? undefined : paid?.receipt;
      this.account(reservation, charged, receipt);
    }
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
