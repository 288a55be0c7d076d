/**
 * Payment schemes as the skill server sells through them: the seam between the one paid-call
 * pipeline (paid-call.ts) and what differs per x402 scheme. `exact` (schemes/exact/: one EIP-3009
 * transfer per call) and `batch-settlement` (schemes/channel/: payment channels) implement it.
 *
 * ## The pipeline, and who decides what
 *
 * 1. Route (handler.ts): a skill's base terms; each scheme says what it offers for them
 *    ({@link ServerScheme.offer}); the 402 lists the offers in the schemes' order.
 * 2. Read (pipeline): the payment header decoded once; no payment, or one that cannot be read, is
 *    answered the 402. The payment's `accepted.scheme` (x402 v1: its `scheme`) picks the scheme,
 *    which must be one the route offers (else the 402).
 * 3. Pay (scheme): {@link ServerScheme.pay} checks the payment against its offer, takes it (single
 *    use), has it verified, runs the handler once through {@link SchemeKit.run} and, only after a
 *    good result, makes the payment final; it answers with the result body of {@link SchemeKit.run},
 *    the 402 of {@link SchemeKit.required} or an answer of its own (a held payment's 409).
 * 4. Tell (scheme): a paid call is reported once through {@link SchemeKit.settled}.
 *
 * Besides its own schemes, the skill handler sells through the ones its `extraSchemes` option
 * builds ({@link ServerSchemeFactory}): tests plug in a made-up scheme there (test/support/schemes/).
 */
import type { Address, PaymentTerms, SignedSkillReceipt } from '../x402/index';
import type { FacilitatorClient } from './facilitator-client';
import type { StoredResponse } from './http';
import type { CreatorLogger } from './logger';
import type { Skill } from './skill';

/** One offer of a route: an entry of its 402's `accepts` (x402 v2 PaymentRequirements of its scheme). */
export interface Offer {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

/** A skill as sold before the schemes made their offers: its definition, price and base terms. */
export interface BaseRoute {
  name: string;
  skill: Skill;
  /** The base terms (the documented 402 body, the resource, the token); `paymentRequired.accepts` lists every offer. */
  terms: PaymentTerms;
  /** Price in the asset's atomic units. */
  amount: bigint;
}

/** A skill ready to be sold: its base terms and what each scheme offers for it, in the 402's order. */
export interface SkillRoute extends BaseRoute {
  offers: ReadonlyMap<string, Offer>;
}

/** A paid call as call tracking and `onSettled` see it, whatever the scheme. */
export interface SettledCall {
  skill: string;
  /** The scheme that paid it: `exact`, `batch-settlement` or `upto`; `trial` for a free trial call (amount 0, `nonce` the sign-in's). */
  scheme: string;
  /** The amount in whole tokens, e.g. `"0.001"`, for people (logs, `onSettled`). */
  amount: string;
  /** The amount paid (a channel call: charged) in the token's atomic units, e.g. `"1000"`: what call tracking reports. */
  amountAtomic?: string;
  payer: string;
  /** Settlement transaction hash; for a channel call the deposit's, or `""` (a voucher moves nothing yet). */
  transaction: string;
  /** The payer's EIP-3009 authorization nonce: which payment of the transaction this is (a batch settles many); `""` for a channel call. */
  nonce: string;
  network: string;
  /** Channel calls: the channel (bytes32 hex). */
  channelId?: string;
  /** Channel calls: the channel's cumulative charge after this call, atomic units. */
  chargedCumulativeAmount?: string;
  /** The receipt the answer carried (receipts.ts), when the server signs them: call tracking sends it along. */
  receipt?: SignedSkillReceipt;
  /** Volume prices: the tier that priced the call (its step's `after`; 0 the base price). */
  tier?: number;
}

/** A request that carries a payment of a scheme the route offers. */
export interface PaidRequest {
  route: SkillRoute;
  /** What the scheme offers for this route. */
  offer: Offer;
  /** The validated input (POST); `{}` for a GET. */
  input: unknown;
  request: Request;
  /** The payment header's decoded JSON (an x402 PaymentPayload of this scheme, not yet checked). */
  payload: Record<string, unknown>;
}

/** How a handler run ended, as a scheme decides on it. */
export type SkillRun =
  /** A good result: the body to answer, what the handler charged (the price unless it said less), the tier (`SettledCall.tier`). */
  | { type: 'ok'; body: { success: true; result: unknown; timestamp: string }; charged: bigint; tier?: number }
  /** The handler failed, timed out or broke its outputSchema: the answer, and nothing is charged. */
  | { type: 'failed'; response: StoredResponse };

/** What a handler run is given by the scheme. */
export interface RunOptions {
  payer: Address;
  /** Deadline of the run, ms (at most the skill's timeout). */
  timeoutMs: number;
  /** Whether the handler may charge less than the price (`context.charge`); otherwise its charge is ignored. */
  chargeable: boolean;
}

/** What the pipeline gives every scheme: one handler run, one 402, one 503, one report of a paid call. */
export interface SchemeKit {
  /** Runs the skill's handler once (onCall, onError, the outputSchema, the failure answers). */
  run(call: PaidRequest, options: RunOptions): Promise<SkillRun>;
  /** The route's 402 with `error`; `amend` adds fields to the `extra` of this scheme's offer (a corrective state). */
  required(route: SkillRoute, error?: string, amend?: { scheme: string; extra: Record<string, unknown> }): StoredResponse;
  /** 503 with Retry-After: nothing was charged (or, as the message says, it cannot be known yet). */
  unavailable(message: string): StoredResponse;
  /**
   * The 200 answer of a paid call: `result` as the body, `headers` (the scheme's PAYMENT-RESPONSE)
   * and, when the server signs receipts, the receipt of `settled` over that exact body; with the
   * report of the call carrying the receipt, for {@link settled}. Never throws.
   */
  paidAnswer(
    route: SkillRoute,
    settled: SettledCall,
    result: unknown,
    headers: Record<string, string>,
  ): Promise<{ response: StoredResponse; settled: SettledCall }>;
  /**
   * {@link paidAnswer} for a body already written (a held result released later): the headers to
   * send it with (the receipts added to `headers`) and the report carrying the receipt. Never throws.
   */
  signBody(
    route: SkillRoute,
    settled: SettledCall,
    body: string,
    headers: Record<string, string>,
  ): Promise<{ headers: Record<string, string>; settled: SettledCall }>;
  /** Reports a paid call (call tracking, `onSettled`); never throws. */
  settled(call: SettledCall): void;
  now(): number;
}

/** One x402 payment scheme on the skill server. */
export interface ServerScheme {
  /** The `scheme` of the payments it takes. */
  readonly id: string;
  /** What it offers for a route (its entry in the 402's `accepts`); undefined when it sells nothing there. */
  offer(route: BaseRoute): Offer | undefined;
  /** Handles a paid `POST /<name>` (the input is valid). */
  pay(call: PaidRequest): Promise<StoredResponse>;
  /**
   * The payer a payment names before it is taken, for a scheme that takes exactly the amount it
   * offered (not a charge decided after the run): a skill with volume prices takes it at that
   * payer's quoted tier price. Undefined (or no `quotedPayer`): the route's own price.
   */
  quotedPayer?(payload: Record<string, unknown>): string | undefined;
  /** Handles a `GET /<name>` that carries its payment (e.g. a channel's refund); undefined (or no `get`): 405. */
  get?(call: PaidRequest): Promise<StoredResponse | undefined>;
  /** Stops its background work and releases what it holds. */
  close?(): Promise<void>;
}

/** What a scheme is built with: what the skill handler gives its own schemes. */
interface SchemeContext {
  kit: SchemeKit;
  /** The skill server's facilitator (`forward` takes a payload of any scheme). */
  facilitator: FacilitatorClient;
  logger: CreatorLogger;
  /** The `holdMs` option: longest a paid request waits for its payment's open outcome, ms. */
  holdMs: number;
}

/** Builds a scheme for one skill handler (a handler built again builds its schemes again). */
export type ServerSchemeFactory = (context: SchemeContext) => ServerScheme;
