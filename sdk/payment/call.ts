/**
 * One paid call, start to end, whatever the scheme (scheme.ts describes the steps and who
 * decides what): checks that need no server (active, network, endpoint, input, price limits,
 * wallet), the quote (the 402 exchange, or the listing in fast mode), the terms check, budget
 * reservation, signing, sending the proof (delivery.ts), and reading the outcome. `charged` is
 * never `'no'` when the payment may have been taken (doubt.ts): then the scheme asks the chain,
 * else it is `'unknown'`, and the price stays counted against the budget.
 */
import { MarketError, type ChargeState } from '../http/errors';
import type { Answer, FetchLike } from '../http/exchange';
import type { Skill } from '../registry/read';
import type { Address, Caip2Network, ResourceInfo } from '../x402/index';
import { failureOf, paymentReceipt, reasonOf, resultOf } from './answer';
import { Delivery } from './delivery';
import { doubtOf, errorMayBePaid } from './doubt';
import { echoDeclaredExtensions } from './extensions';
import { PaidCallError, ReceiptError, TermsMismatchError } from './errors';
import { checkReceipt, type ReceiptMode } from './receipt-check';
import { checkSkill } from './preflight';
import type { UsedTrials } from './used-trials';
import type { ChosenTerms, PaymentScheme, SignedPayment, Terms, TermsPolicy } from './scheme';
import type { PaymentSigner } from './signer';
import { checkMaxPrice, type Reservation, type SpendingLedger } from './spending';
import { chooseAmong, readOfferedTerms, type Choice, type OfferedTerms } from './terms';
import type { CallResult, PaymentMode, PaymentReceipt } from './types';

/** What a call needs from its pipeline. */
export interface CallContext {
  lookup(slug: string, fresh: boolean, signal?: AbortSignal): Promise<{ skill: Skill; cached: boolean }>;
  schemes: readonly PaymentScheme[];
  signer: PaymentSigner | undefined;
  ledger: SpendingLedger;
  policy: TermsPolicy;
  network: Caip2Network;
  maxPrice: bigint | undefined;
  allowHttp: boolean;
  checkInput: ((skill: Skill, body: string) => Promise<void>) | undefined;
  fetch: FetchLike;
  retries: number;
  pendingTimeoutMs: number;
  unavailable: { retries: number; maxWaitMs: number };
  /** Terms a server asked for before, per slug: fast mode reuses them while the listing agrees. */
  learned: Map<string, ChosenTerms<Terms>>;
  /** Called once per paid call (usage records). */
  /** A paid call, with the scheme that paid it (`exact`, `batch-settlement`). */
  paid: ((receipt: PaymentReceipt, skill: Skill, scheme: string) => void) | undefined;
  /** What a refused signed receipt does (receipt-check.ts). */
  receipts: ReceiptMode;
  /** Skill endpoints and wallets whose free trial a server said is used up: no sign-in is offered to them again before it comes back. */
  usedTrials: UsedTrials;
}

/** The x402 extensions a 402 declared, echoed in its payment. */
type Extensions = Record<string, unknown> | undefined;

/** Per-call settings. */
export interface CallSettings {
  mode: PaymentMode;
  maxPrice?: bigint | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  budgetLeft?: bigint | undefined;
  beforePay?: ((quote: PaymentQuote) => void | Promise<void>) | undefined;
  /** Use a free trial the skill offers (x402 `sign-in-with-x`, signed by the wallet) before paying; default true. */
  trial?: boolean | undefined;
}

/**
 * What a call will pay, before anything is signed: the skill answered already (a free call), or
 * the terms it asks for, checked against the listing (to show and confirm before {@link PaidCall.pay}).
 */
export type Quote<T = unknown> =
  | { type: 'answered'; result: CallResult<T> }
  | {
      type: 'payment-required';
      skill: Skill;
      terms: ChosenTerms<Terms>;
      /** The resource the payment is for (the 402's, or the endpoint in fast mode). */
      resource: ResourceInfo;
      /** The proof goes with the first request (fast mode): nothing was sent yet. */
      fast: boolean;
      /** What paying deposits into a payment channel first, atomic units (see {@link PaidCall.deposit}). */
      deposit?: bigint | undefined;
    };

/** A quote that asks for payment. */
export type PaymentQuote = Extract<Quote, { type: 'payment-required' }>;

/**
 * One call through the payment pipeline: `quote()` then `pay(signer)`, or `run()` for both with
 * the pipeline's signer. Made by {@link PaymentPipeline.start}.
 */
export class PaidCall<T = unknown> {
  private skill!: Skill;
  private cached = false;
  private needSigner = false;
  private sending: Delivery | undefined;
  private quoted: { choice: Choice; resource: ResourceInfo; extensions: Extensions } | undefined;
  private signer!: PaymentSigner;
  /** What this call holds of the budget right now. */
  private held = 0n;
  /** The one retry a scheme may ask for after a 402 was used. */
  private retried = false;
  /** The last payment signed, its scheme, and what the call concluded it cost. */
  private last: { payment: SignedPayment; scheme: PaymentScheme; charged: ChargeState } | undefined;
  private readonly body: string;
  private readonly slug: string;

  constructor(
    private readonly ctx: CallContext,
    private readonly target: string | Skill,
    input: unknown,
    private readonly settings: CallSettings,
  ) {
    const slug = typeof target === 'string' ? target : target?.slug;
    if (typeof slug !== 'string' || slug === '') throw new TypeError('call: slug must be a non-empty string');
    const body = JSON.stringify(input ?? {});
    if (body === undefined) throw new TypeError('call: input must be JSON-serializable');
    this.slug = slug;
    this.body = body;
  }

  /**
   * The whole call with the pipeline's signer: quote, then pay when payment is asked.
   *
   * @throws MarketError('wallet_required') before any request when the pipeline has no signer
   */
  async run(): Promise<CallResult<T>> {
    this.needSigner = true;
    const quote = await this.quote();
    if (quote.type === 'answered') return quote.result;
    await this.settings.beforePay?.(quote);
    return this.pay();
  }

  /**
   * Checks the listing (nothing sent when a check fails), then finds what the call costs: in fast
   * mode the terms from the listing (or learned from this server before), else the unpaid request:
   * its 402's terms, checked against the listing, or its answer when it asks for no payment.
   *
   * @throws TermsMismatchError, SpendingLimitError, InputValidationError, SkillCallError or MarketError
   */
  async quote(): Promise<Quote<T>> {
    if (this.sending) throw new TypeError('PaidCall.quote: a call is quoted once');
    const { skill, cached } = await this.lookup(false);
    await this.adopt(skill, cached);
    // A listed trial is tried before paying: fast mode's proof would pay for a call the trial gives free.
    if (this.settings.mode === 'fast' && !(this.skill.trial && this.trialSigner())) {
      const choice = this.learnedChoice() ?? this.listingChoice();
      if (choice) return this.required(choice, { url: this.skill.endpoint }, undefined, true);
    }
    let first = await this.delivery.post(undefined);
    if (first.status !== 402) return { type: 'answered', result: await this.outcome(first, undefined, undefined) };
    let offered = readOfferedTerms(first, this.skill);
    let choice = await this.choose(offered.candidates, this.ctx.schemes);
    // A free trial call, or (paying exact) the payer's volume price: both are asked by signing in.
    // (Not when trials are refused for a skill that has one: its server would answer a sign-in with the free call.)
    const tierQuote = this.skill.tiers && choice.scheme.id === 'exact' && !(this.skill.trial && this.settings.trial === false);
    // A listing that says it has no trial (null) is not asked for one (a listing that does not say may have one).
    const signIn = (this.skill.trial !== null && this.trialSigner() !== undefined) || tierQuote;
    const trial = signIn ? await this.tryTrial(offered.extensions) : undefined;
    if (trial?.status === 402) {
      first = trial;
      offered = readOfferedTerms(first, this.skill);
      choice = await this.choose(offered.candidates, this.ctx.schemes);
    } else if (trial) return { type: 'answered', result: { ...(await this.outcome(trial, undefined, undefined)), ...trialOf(trial) } };
    this.ctx.learned.set(this.slug, choice.terms);
    return this.required(choice, offered.resource, offered.extensions, false);
  }

  /**
   * Pays the quoted terms: reserves the price, signs with `signer`, sends the proof, verifies
   * the answer. Once per call, after a quote that asked for payment.
   *
   * @throws SkillCallError or MarketError, saying whether money moved (`charged`)
   */
  async pay(signer: PaymentSigner | undefined = this.ctx.signer): Promise<CallResult<T>> {
    const quoted = this.quoted;
    if (!quoted) throw new TypeError('PaidCall.pay: quote() first, and only when it asks for a payment');
    this.quoted = undefined;
    if (!signer) throw walletRequired(this.skill.slug);
    this.signer = signer;
    try {
      return await this.payWith(quoted.choice, { resource: quoted.resource, extensions: quoted.extensions }, this.reserve());
    } finally {
      const last = this.last;
      try {
        if (last) await last.scheme.finish?.(last.payment, last.charged);
      } catch {
        // The scheme's bookkeeping: its failure must not hide what the call itself came to.
      }
    }
  }

  private async required(choice: Choice, resource: ResourceInfo, extensions: Extensions, fast: boolean): Promise<Quote<T>> {
    this.quoted = { choice, resource, extensions };
    const deposit = this.ctx.signer && (await this.deposit(this.ctx.signer.address));
    return { type: 'payment-required', skill: this.skill, terms: choice.terms, resource, fast, deposit };
  }

  /** The signer that may sign a sign-in for a free trial here, when trials are wanted and not known to be used up. */
  private trialSigner() {
    const signer = this.ctx.signer;
    if (this.settings.trial === false || !signer?.signText) return undefined;
    return this.ctx.usedTrials.until(this.skill.endpoint, signer.address) === undefined ? signer : undefined;
  }

  /**
   * Asks for a free trial call when the 402 offers one (`sign-in-with-x`) bound to the skill's own
   * server: the answer, or undefined when none was asked. A 402 to the sign-in (the trial used up)
   * carries fresh terms to pay, and no sign-in is offered to this skill again before the trial comes back.
   */
  private async tryTrial(extensions: Extensions): Promise<Answer | undefined> {
    const signer = this.ctx.signer;
    if (!signer?.signText || !extensions?.['sign-in-with-x']) return undefined;
    // Loaded at the first sign-in: a page that never meets a free trial does not carry it.
    const { readSiwxDeclaration, signSiwx } = await import('../x402/siwx');
    const declaration = readSiwxDeclaration(extensions);
    if (!declaration) return undefined;
    const endpoint = new URL(this.skill.endpoint);
    // Never sign a sign-in for another site than the one called (it could be used there).
    if (
      declaration.info.domain !== endpoint.host ||
      !URL.canParse(declaration.info.uri) ||
      new URL(declaration.info.uri).origin !== endpoint.origin
    )
      return undefined;
    const signText = signer.signText;
    const header = await signSiwx(declaration, { address: signer.address, signMessage: ({ message }) => signText(message) });
    const answer = await this.delivery.post(undefined, header);
    if (answer.status === 402 && this.skill.trial) this.ctx.usedTrials.add(this.skill.endpoint, signer.address, answer.headers);
    return answer;
  }

  /** What paying from `payer` deposits into a payment channel first (0n: none); nothing signed. */
  async deposit(payer: Address): Promise<bigint | undefined> {
    const { scheme, terms } = (this.quoted as NonNullable<typeof this.quoted>).choice; // after a quote asking for payment
    return scheme.deposit?.(terms, payer, { room: this.room() });
  }

  /** What the budgets leave after this call's price: the pipeline's (this call's hold counted) and the call's `budgetLeft`. */
  private room(): bigint | undefined {
    const left = this.ctx.ledger.snapshot().remaining;
    const outer = this.settings.budgetLeft;
    const own = left === undefined ? outer : left + this.held;
    const least = outer !== undefined && own !== undefined && outer < own ? outer : own;
    return least === undefined ? least : least - BigInt(this.skill.priceAtomic);
  }

  private lookup(fresh: boolean): Promise<{ skill: Skill; cached: boolean }> {
    if (typeof this.target !== 'string') return Promise.resolve({ skill: this.target, cached: false });
    return this.ctx.lookup(this.slug, fresh, this.settings.signal);
  }

  /** Takes a listing after every check that needs no answer from the skill server. */
  private async adopt(skill: Skill, cached: boolean): Promise<void> {
    checkSkill(skill, this.ctx.network, this.ctx.allowHttp);
    await this.ctx.checkInput?.(skill, this.body);
    checkMaxPrice(BigInt(skill.priceAtomic), skill.slug, this.ctx.maxPrice, this.settings.maxPrice);
    this.ctx.ledger.check(BigInt(skill.priceAtomic), skill.slug, this.held);
    if (this.needSigner && !this.ctx.signer) throw walletRequired(skill.slug);
    this.skill = skill;
    this.cached = cached;
    this.sending ??= new Delivery({
      endpoint: skill.endpoint,
      body: this.body,
      slug: this.slug,
      fetch: this.ctx.fetch,
      timeoutMs: this.settings.timeoutMs,
      retries: this.ctx.retries,
      signal: this.settings.signal,
      pendingTimeoutMs: this.ctx.pendingTimeoutMs,
      unavailable: this.ctx.unavailable,
    });
  }

  /** The call's requests, once a listing was adopted. */
  private get delivery(): Delivery {
    if (!this.sending) throw new Error('PaidCall: no listing adopted yet');
    return this.sending;
  }

  private reserve(): Reservation {
    const reservation = this.ctx.ledger.reserve(BigInt(this.skill.priceAtomic), this.slug);
    this.held = reservation.amount;
    return reservation;
  }

  /** The offered terms that match the listing; a mismatch against a cached listing is re-checked against a fresh one. */
  private async choose(candidates: readonly unknown[], schemes: readonly PaymentScheme[]): Promise<Choice> {
    try {
      return chooseAmong(candidates, this.skill, this.ctx.policy, schemes);
    } catch (error) {
      if (!(error instanceof TermsMismatchError) || !this.cached) throw error;
      const fresh = await this.lookup(true);
      // Terms from one server are never paid to another endpoint.
      if (fresh.skill.endpoint !== this.skill.endpoint || !paymentFieldsChanged(this.skill, fresh.skill)) throw error;
      await this.adopt(fresh.skill, false);
      return chooseAmong(candidates, this.skill, this.ctx.policy, schemes);
    }
  }

  private async payWith(
    choice: Choice,
    offered: { resource: ResourceInfo; extensions: Extensions },
    reservation: Reservation,
    previous?: SignedPayment,
  ): Promise<CallResult<T>> {
    const { scheme } = choice;
    const { resource } = offered;
    let payment: SignedPayment;
    try {
      const context = { resource, previous, room: this.room() };
      payment = await scheme.sign(choice.terms, this.signer, context);
      echoDeclaredExtensions(payment, offered.extensions);
    } catch (error) {
      reservation.release();
      throw error;
    }
    // Until an answer says otherwise, a sent payment may have been taken.
    this.last = { payment, scheme, charged: 'unknown' };
    let answer: Answer;
    try {
      answer = await this.delivery.deliver(payment.proof);
    } catch (error) {
      // No (whole) answer to a sent proof: it may have been settled, so the money counts as spent.
      const { charged, receipt } = await this.onChain(payment, scheme, reservation);
      const code = error instanceof MarketError ? error.code : 'network_error';
      throw new PaidCallError(code, `${(error as Error).message}; the payment may have been settled`, {
        slug: this.slug,
        charged,
        cause: error,
        ...(receipt ? { receipt } : {}),
      });
    }
    const doubt = doubtOf(answer, this.delivery.resent, this.ctx.pendingTimeoutMs, scheme);
    if (doubt) {
      const { charged, receipt } = await this.onChain(payment, scheme, reservation);
      throw new PaidCallError(doubt.code, `${this.slug} ${doubt.message}`, {
        status: answer.status,
        body: answer.text,
        slug: this.slug,
        charged,
        ...(receipt ? { receipt } : {}),
      });
    }
    if (answer.status === 402) return this.refused(answer, choice, payment, reservation);
    return this.outcome(answer, { payment, scheme }, reservation);
  }

  /**
   * What the chain says of a payment the server's answer left open (the scheme reads it: `unknown`
   * without a chain), settling the reservation by it.
   */
  private async onChain(
    payment: SignedPayment,
    scheme: PaymentScheme,
    reservation: Reservation,
  ): Promise<{ charged: ChargeState; receipt?: PaymentReceipt }> {
    const seen = await scheme.onChain(payment).catch(() => ({ charged: 'unknown' as const, transaction: null }));
    const receipt = seen.charged === 'yes' ? paymentReceipt(this.skill, payment, seen.transaction) : undefined;
    this.account(reservation, seen.charged, receipt, payment.requirements.scheme);
    return receipt ? { charged: seen.charged, receipt } : { charged: seen.charged };
  }

  /** Ends the call's hold on the budget (released only when certainly not charged) and records a paid call. */
  private account(reservation: Reservation | undefined, charged: ChargeState, receipt: PaymentReceipt | undefined, scheme = ''): void {
    if (charged === 'no') reservation?.release();
    // A confirmed charge below the price (upto, a channel's charge) spends only that much of the budget.
    else reservation?.commit(charged === 'yes' && receipt ? BigInt(receipt.amount) : undefined);
    if (reservation && this.last) this.last.charged = charged;
    if (receipt && charged !== 'no') this.ctx.paid?.(receipt, this.skill, scheme);
  }

  /**
   * A 402 to a proof: the scheme says whether it is a plain refusal (not charged) or worth one
   * retry, with terms the pipeline checks against the listing (exact's fast mode: the server's
   * own terms, same nonce; a channel's corrective 402: the corrected voucher).
   */
  private async refused(answer: Answer, choice: Choice, payment: SignedPayment, reservation: Reservation): Promise<CallResult<T>> {
    let offered: OfferedTerms;
    try {
      offered = readOfferedTerms(answer, this.skill);
    } catch {
      this.account(reservation, 'no', undefined);
      throw this.rejected(answer, reasonOf(answer));
    }
    try {
      if (this.retried) throw this.rejected(answer, offered.error);
      this.retried = true;
      const verdict = await choice.scheme.onRefused({
        answer,
        reason: offered.error,
        candidates: offered.candidates,
        payment,
        mode: this.settings.mode,
        choose: async () => (await this.choose(offered.candidates, [choice.scheme])).terms,
      });
      if (verdict.type === 'refused') {
        if (!verdict.why) throw this.rejected(answer, offered.error);
        throw new MarketError('payment_rejected', `${this.slug} ${verdict.why}`, { status: 402, body: answer.text, slug: this.slug });
      }
      this.ctx.learned.set(this.slug, verdict.terms);
      if (BigInt(this.skill.priceAtomic) !== reservation.amount) {
        reservation.release();
        reservation = this.reserve();
      }
      if (verdict.afterMs) await this.delivery.pause(verdict.afterMs, 'before paying again');
      const again = { resource: offered.resource, extensions: offered.extensions };
      return await this.payWith({ scheme: choice.scheme, terms: verdict.terms }, again, reservation, payment);
    } catch (error) {
      // The refused payment was not taken, unless a later one of this call says otherwise.
      if (this.last?.payment === payment) this.account(reservation, 'no', undefined);
      else reservation.release(); // a no-op: the later payment settled it
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
  private async outcome(
    answer: Answer,
    sent: { payment: SignedPayment; scheme: PaymentScheme } | undefined,
    reservation: Reservation | undefined,
  ): Promise<CallResult<T>> {
    const ok = answer.status >= 200 && answer.status < 300;
    let charged: ChargeState = 'no';
    let receipt: PaymentReceipt | undefined;
    if (!sent) {
      this.account(reservation, charged, undefined);
    } else {
      const settlement = await sent.scheme.onAnswer(answer, sent.payment);
      if (settlement.problem) {
        // What was signed may be claimed: the price stays counted.
        this.account(reservation, 'unknown', undefined);
        throw new MarketError('channel_stopped', `${this.slug}: ${settlement.problem}; no more payments are signed to it`, {
          status: answer.status,
          body: answer.text,
          slug: this.slug,
          charged: 'unknown',
        });
      }
      if (reservation && !ok && !settlement.settled && errorMayBePaid(answer, this.delivery.resent)) {
        ({ charged, receipt } = await this.onChain(sent.payment, sent.scheme, reservation));
      } else {
        // After a proof: a 2xx is paid (confirmed by a receipt or not); an error is paid only with a receipt.
        charged = settlement.settled ? 'yes' : ok ? 'unknown' : 'no';
        receipt =
          charged === 'no'
            ? undefined
            : paymentReceipt(this.skill, sent.payment, settlement.transaction, settlement.chargedCumulativeAmount, settlement.charged);
        // Checked before the payment is accounted for: its usage record carries the receipt.
        const signed =
          ok && receipt ? await checkReceipt(answer, this.skill, receipt, BigInt(sent.payment.requirements.amount)) : undefined;
        if (receipt && signed) receipt = { ...receipt, signed };
        this.account(reservation, charged, receipt, sent.payment.requirements.scheme);
      }
    }
    if (!ok) throw failureOf(answer, this.slug, charged, receipt, sent?.scheme.explain);
    const result: CallResult<T> = {
      result: resultOf(answer, this.slug, charged, receipt) as T,
      receipt: receipt ?? null,
      skill: this.skill,
    };
    if (receipt?.signed?.valid === false && this.ctx.receipts === 'strict')
      throw new ReceiptError(this.slug, receipt.signed.reason, result, answer);
    return result;
  }

  /** Terms this server asked for before, while they still match the listing. */
  private learnedChoice(): Choice | undefined {
    const learned = this.ctx.learned.get(this.slug);
    const scheme = learned && this.ctx.schemes.find((s) => s.id === learned.requirements.scheme);
    if (!learned || !scheme) return undefined;
    try {
      return chooseAmong([learned.requirements], this.skill, this.ctx.policy, [scheme]);
    } catch {
      return undefined;
    }
  }

  /** Terms from the listing alone, from the first scheme that can build them. */
  private listingChoice(): Choice | undefined {
    for (const scheme of this.ctx.schemes) {
      const terms = scheme.fromListing?.(this.skill, this.ctx.policy);
      if (terms) return { terms, scheme };
    }
    return undefined;
  }
}

/** A free trial call's marks on its result: `trial` and the calls left, as the server said. */
function trialOf(answer: Answer): { trial: true; trialCallsLeft?: number } {
  const left = Number(answer.headers.get('X-Trial-Calls-Left'));
  return answer.headers.has('X-Trial-Calls-Left') && Number.isInteger(left) && left >= 0
    ? { trial: true, trialCallsLeft: left }
    : { trial: true };
}

function walletRequired(slug: string): MarketError {
  return new MarketError(
    'wallet_required',
    `Calling ${slug} needs a wallet: pass wallet (a private key or a viem account) to SkillMarket`,
    {
      slug,
    },
  );
}

function paymentFieldsChanged(a: Skill, b: Skill): boolean {
  return a.priceAtomic !== b.priceAtomic || a.paymentAddress !== b.paymentAddress || a.network !== b.network;
}
