/**
 * Payment schemes as the consumer pipeline drives them: the seam between the one pipeline
 * (PaymentPipeline, call.ts) and what differs per x402 scheme: `exact` (schemes/exact.ts) and
 * `batch-settlement` (payment channels, schemes/channel/) implement it.
 *
 * ## The pipeline, and who decides what
 *
 * 1. Quote (pipeline): the listing's checks that need no server (active, network, http, input,
 *    maxPrice, budget, wallet); in fast mode terms from the listing ({@link PaymentScheme.fromListing})
 *    or the terms this server asked for before; otherwise the unpaid request and its 402.
 * 2. Choose (pipeline + scheme): the client's schemes in its order of preference, each against the
 *    402's candidates of its id. The pipeline checks what the listing fixes: network, payTo, an
 *    accepted asset, exactly the listed price. The scheme checks the rest
 *    ({@link PaymentScheme.accepts}: `exact` the token's EIP-712 domain and the window) and parses.
 * 3. Sign (scheme): {@link PaymentScheme.sign} with any {@link PaymentSigner} (a key, a keystore's
 *    account, a browser wallet): the x402 v2 payload and its header.
 * 4. Pay (pipeline): the budget holds the price first; the proof goes out (the same proof again
 *    after a lost answer, after a 503 with Retry-After, and while the server answers "payment
 *    pending"). Never a new signature, except where the scheme asks for one after a 402 (5).
 * 5. Verify the answer (pipeline + scheme): an answer that leaves the payment open (a lost answer,
 *    pending past its time, a refusal of a re-sent proof, a reason in
 *    {@link PaymentScheme.maybeSpentReasons}, a failed settlement not in
 *    {@link PaymentScheme.nothingMovedReasons}, a 502) is settled by {@link PaymentScheme.onChain}
 *    (`unknown` without a chain). A 402 goes to {@link PaymentScheme.onRefused}: refused (not
 *    charged), or one retry per call with terms the pipeline checked against the listing again.
 *    Any other answer goes to {@link PaymentScheme.onAnswer}: did the server confirm this payment,
 *    and in which transaction. The pipeline turns that into `charged` ('yes' | 'no' | 'unknown'),
 *    the receipt, the budget (released only when certainly not charged) and the result or error.
 *    {@link PaymentScheme.finish} then closes the payment once, with what it cost.
 *
 * ## batch-settlement (schemes/channel/)
 *
 * State (channel records) stays inside the scheme and its store; `sign` holds the channel's lock
 * until `finish`; `onAnswer` checks the channel's PAYMENT-RESPONSE and reports a broken one as a
 * `problem`; `onRefused` adopts a corrective 402's state (its voucher checked to be the payer's
 * own) and asks for one retry. Withdrawals are channel operations outside this pipeline.
 */
import type { ChargeState } from '../http/errors';
import type { Answer } from '../http/exchange';
import type { Skill } from '../registry/read';
import type { Address, Hex, PaymentRequirements, ResourceInfo } from '../x402/index';
import type { AcceptedAsset } from './assets';
import type { TermsField } from './errors';
import type { PaymentSigner } from './signer';
import type { PaymentMode } from './types';

/** Payment terms of any scheme, as one candidate of a 402's `accepts` (x402 v2 PaymentRequirements). */
export type Terms = Omit<PaymentRequirements, 'scheme'> & { scheme: string };

/** Terms the client agreed to pay, and the accepted asset they are paid in. */
export interface ChosenTerms<R extends Terms = PaymentRequirements> {
  requirements: R;
  asset: AcceptedAsset;
}

/** What a client accepts in payment terms: the assets it pays in and the longest authorization it signs. */
export interface TermsPolicy {
  /** Tokens (per network) this client pays in. */
  allowed: readonly AcceptedAsset[];
  /** Longest validity accepted for an authorization, in seconds. */
  maxTimeoutSeconds: number;
}

/** Which term disagrees, what was expected and what was offered (for TermsMismatchError). */
export interface TermsProblem {
  field: TermsField;
  expected: string;
  actual: string;
}

/** What a scheme's check of one candidate is given: the listing, the policy, and the accepted asset the listing checks found. */
export interface CandidateContext {
  skill: Skill;
  policy: TermsPolicy;
  asset: AcceptedAsset;
}

/** The scheme's verdict on one candidate: its parsed terms, or the first problem and how many of its checks passed before it. */
export type Acceptance = { ok: true; requirements: Terms } | { ok: false; problem: TermsProblem; passed: number };

/** A signed payment, as sent and as the call remembers it. */
export interface SignedPayment<P = unknown> {
  /** The terms paid (the payload's `accepted`). */
  requirements: Terms;
  /** The x402 v2 PaymentPayload; `payload` is the scheme's own. */
  payload: { x402Version: 2; accepted: Terms; payload: P; resource?: ResourceInfo; extensions?: Record<string, unknown> };
  /** The header value (PAYMENT-SIGNATURE and X-Payment): base64 of the payload's JSON. */
  proof: string;
  payer: Address;
  /** What names this payment in receipts and usage records: the EIP-3009 nonce for `exact`. */
  reference: Hex;
  /** The payment channel it pays over (`batch-settlement`). */
  channelId?: Hex;
  /** The channel's cumulative charge this payment allows (`batch-settlement`: the voucher's amount), atomic units. */
  cumulative?: string;
  /** What this payment deposits into its channel, when it does (`batch-settlement`), atomic units (escrow, not the charge). */
  deposit?: string;
}

/** What {@link PaymentScheme.sign} is given besides the terms and the signer. */
export interface SignContext<P = unknown> {
  /** The resource the 402 names, echoed in the payload. */
  resource: ResourceInfo;
  /** The same call's payment a 402 refused, when the pipeline signs again for a retry the scheme asked for. */
  previous?: SignedPayment<P>;
  /** What the budget (and the call's `budgetLeft`) leaves after this call's price, atomic units; undefined without one. */
  room?: bigint | undefined;
}

/** A 402 answered to a payment. */
export interface Refusal<P = unknown> {
  answer: Answer;
  /** The server's reason (`error` of the 402), when it gives one. */
  reason: string | undefined;
  /** The 402's candidates, unchecked (a corrective 402 carries the scheme's state in `extra`). */
  candidates: readonly unknown[];
  payment: SignedPayment<P>;
  mode: PaymentMode;
  /**
   * The 402's terms checked against the listing (a cached listing is re-checked against a fresh
   * one first), as the pipeline would choose them.
   *
   * @throws TermsMismatchError when none matches
   */
  choose(): Promise<ChosenTerms<Terms>>;
}

/** What a scheme makes of a 402 to its payment. */
export type RefusalVerdict =
  /** Not charged; `why` completes "<slug> …" in the error, else the server's reason is quoted. */
  | { type: 'refused'; why?: string }
  /** Sign `terms` (with `previous` set) and send them, after `afterMs` if given: at most once per call. */
  | { type: 'retry'; terms: ChosenTerms<Terms>; afterMs?: number };

/** What an answer (not a 402, not one that leaves the payment open) says about a payment. */
export interface Settlement {
  /** The server confirmed this payment (a successful `PAYMENT-RESPONSE` that matches it). */
  settled: boolean;
  /** The transaction that moved the money; null when none is named (or none moved, as for a voucher). */
  transaction: Hex | null;
  /** The channel's cumulative charge after the call, as the server confirmed it (`batch-settlement`). */
  chargedCumulativeAmount?: string;
  /** What the server charged when it may be less than the terms' amount (`upto`'s settlement, a channel's `chargedAmount`), atomic units. */
  charged?: string;
  /**
   * The answer breaks the scheme's rules (e.g. a channel server charging more than it asked):
   * the call fails with `channel_stopped` and `charged: 'unknown'`, its result withheld.
   */
  problem?: string;
}

/** Ids of the schemes this pipeline knows (`exact`, `batch-settlement`; others plug in through {@link PaymentScheme}). */
export type SchemeId = 'exact' | 'batch-settlement' | (string & {});

/**
 * One x402 payment scheme on the consumer side. An instance may hold state across calls (a
 * channel store); the pipeline calls `finish` exactly once for the last payment each call signed.
 */
export interface PaymentScheme<P = unknown> {
  /** The `scheme` of the terms it pays. */
  readonly id: SchemeId;
  /** 402 reasons after which the payment may have been taken although refused (the pipeline asks {@link onChain}). */
  readonly maybeSpentReasons: ReadonlySet<string>;
  /** Reasons of a failed settlement receipt that mean nothing moved; any other failed settlement may have moved money. */
  readonly nothingMovedReasons: ReadonlySet<string>;
  /** The scheme's checks of a candidate whose network, payTo, asset and price match the listing; parses it. */
  accepts(candidate: Record<string, unknown>, context: CandidateContext): Acceptance;
  /** Terms from the listing alone, for fast mode; undefined when the listing cannot give them. */
  fromListing?(skill: Skill, policy: TermsPolicy): ChosenTerms<Terms> | undefined;
  /** What paying `terms` from `payer` deposits first (0n: none), nothing signed; deposit.ts is the policy. */
  deposit?(terms: ChosenTerms<Terms>, payer: Address, context: Pick<SignContext, 'room'>): Promise<bigint>;
  /** Signs a payment for `terms`. */
  sign(terms: ChosenTerms<Terms>, signer: PaymentSigner, context: SignContext<P>): Promise<SignedPayment<P>>;
  /** A 402 to `refusal.payment`: refused, or a retry with other (or corrected) terms. */
  onRefused(refusal: Refusal<P>): Promise<RefusalVerdict>;
  /** Whether an answer (2xx or an error) confirms the payment, and its transaction. */
  onAnswer(answer: Answer, payment: SignedPayment<P>): Settlement | Promise<Settlement>;
  /** What the chain says of a payment an answer left open; `unknown` when it cannot tell. */
  onChain(payment: SignedPayment<P>): Promise<{ charged: ChargeState; transaction: Hex | null }>;
  /** What the payer can do about a refusal reason of this scheme (e.g. a missing approval), for the error; undefined when nothing. */
  explain?(reason: string): string | undefined;
  /** The call is over: `charged` is what the pipeline concluded for this payment. */
  finish?(payment: SignedPayment<P>, charged: ChargeState): void | Promise<void>;
}
