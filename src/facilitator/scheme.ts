/**
 * A payment scheme as this facilitator settles it, in the role `@x402/core` calls
 * `SchemeNetworkFacilitator`: its wire id, what `/supported` lists for it, and `/verify` and
 * `/settle` of the requests that name it. Each scheme parses its own payload and answers with its
 * own reasons (kept in its folder under schemes/); the service (service.ts) only picks the scheme a
 * request names. A scheme that needs something on the chain (its contracts) says what it misses, and
 * is offered only where nothing is (offering.ts). The lifecycle hooks are for schemes with work of
 * their own in the background.
 */
import type { FacilitatorRequest, SettleResponse, SettlementMode, SupportedKind } from 'skill-market/x402';
import type { AuthorizationKey, SettlementReceipt, SettlementStatus, VerifyResponse } from './types';

/** What a `/settle` call carries besides its body. */
export interface SchemeSettleOptions {
  /** The mode the caller asks for (`X-Settlement-Mode`); the scheme's default when absent. */
  mode?: SettlementMode | undefined;
  /** The caller's `Authorization: Bearer` token, for a scheme that needs to know who asks. */
  bearer?: string | undefined;
}

export interface FacilitatorScheme {
  /** The wire id: `paymentPayload.accepted.scheme` of the requests it takes. */
  readonly id: string;
  /** The (x402Version, scheme, network) kinds `/supported` lists for it. */
  readonly kinds: readonly SupportedKind[];
  /** The addresses that send its transactions, by CAIP family (`eip155:*`): `signers` of `/supported`. */
  readonly signers: Readonly<Record<string, readonly string[]>>;
  /** `/verify` of a request naming this scheme; throws FacilitatorRequestError when it is malformed. */
  verify(request: FacilitatorRequest): Promise<VerifyResponse>;
  /** `/settle` of a request naming this scheme; throws FacilitatorRequestError when it is malformed. */
  settle(request: FacilitatorRequest, options: SchemeSettleOptions): Promise<SettleResponse>;
  /** A settlement transaction this scheme sent, as stored (`GET /receipts/:tx`). */
  receipt?(txHash: string): Promise<SettlementReceipt | undefined>;
  /** What became of one authorization this scheme accepted (`GET /settlements/…`). */
  settlement?(key: AuthorizationKey): Promise<SettlementStatus | undefined>;
  /** What became of each of several authorizations, in order; null for one it never accepted. */
  settlements?(keys: readonly AuthorizationKey[]): Promise<(SettlementStatus | null)[]>;
  /**
   * What the scheme needs on the chain and does not find there (its contracts), as a sentence naming
   * the addresses and the network; undefined when all is there. Rejects when the chain cannot be
   * read. Absent: the scheme needs nothing beyond what each request brings.
   */
  missingOnChain?(): Promise<string | undefined>;
  /** Starts its background work (the facilitator's start, or later, once the chain is found to hold what it needs). */
  start?(): void;
  /** Sends what it holds queued and starts nothing new: the facilitator is stopping. */
  drain?(): void;
  /** Waits for its background work to end, after the facilitator's stop signal. */
  stop?(): Promise<void>;
}
