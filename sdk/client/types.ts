/**
 * The consumer client's public data shapes: what the registry lists, what a call returns, and
 * the options that shape both.
 */
import type { Address, Hex, LocalAccount } from 'viem';
import type { FetchLike } from '../http/exchange';
import type { SearchQuery } from '../registry/contract/index';
import type { Skill } from '../registry/read';
import type { Caip2Network, TypedDataSigner } from '../x402/index';

export type { FetchLike };

/** A skill as the registry lists it (`GET /skills/:slug`), checked by the client (see skill-market/registry). */
export type { Skill } from '../registry/read';
/** A skill group (`GET /groups`). */
export type { GroupView as Group } from '../registry/contract/index';

/** Filters of {@link SkillMarket.search} (the registry's search query but the text); prices are USDC amounts such as `"$0.01"`. */
export type SearchFilters = Omit<SearchQuery, 'q' | 'verified'> & { verified?: boolean };

/** One page of search results. */
export interface SearchPage {
  skills: Skill[];
  /** Pass as `filters.cursor` for the next page; undefined on the last page. */
  nextCursor: string | undefined;
}

/** What a paid call cost and where the money went. */
export interface PaymentReceipt {
  skillId: string;
  slug: string;
  /** Settlement transaction hash; null when the server sent no valid settlement receipt. */
  transaction: Hex | null;
  /** Atomic units of `asset` (micro-USDC for USDC), e.g. `"1000"`. */
  amount: string;
  /** The listed price, e.g. `"$0.001"`. */
  price: string;
  payTo: Address;
  network: Caip2Network;
  asset: Address;
  payer: Address;
  /** The EIP-3009 authorization nonce (single use on chain). */
  nonce: Hex;
}

/** Result of {@link SkillMarket.callWithReceipt}. */
export interface CallResult<T = unknown> {
  /** The handler's result (the `result` of the skill server's success body). */
  result: T;
  /** The payment; null when the server served the call without asking for payment. */
  receipt: PaymentReceipt | null;
  /** The listing the call was checked against. */
  skill: Skill;
}

/**
 * How a call pays. `standard`: POST without payment, read the 402 terms, check them, sign, POST
 * again (two round trips). `fast`: sign from the registry listing and send the proof with the
 * first POST (one round trip); a 402 with other terms falls back to the standard flow, re-signing
 * with the same EIP-3009 nonce so at most one of the two authorizations can ever settle.
 */
export type PaymentMode = 'standard' | 'fast';

/** Per-call options of {@link SkillMarket.call}. */
export interface CallOptions {
  /** Highest price for this call, e.g. `"$0.01"`; capped by the client's `maxPrice`. Default: the listed price. */
  maxPrice?: string | number;
  /** Default: the client's `mode` (`standard`). */
  mode?: PaymentMode;
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Per-attempt timeout in ms; default the client's `timeoutMs`. */
  timeoutMs?: number;
}

/** A token the client may pay in besides the network's built-in USDC (e.g. a test token). */
export interface AllowedAsset {
  /** CAIP-2 network, e.g. `eip155:84532`. */
  network: string;
  address: string;
  /** EIP-712 domain name; omitted: the server's `extra.name` is used. */
  name?: string;
  /** EIP-712 domain version; omitted: the server's `extra.version` is used. */
  version?: string;
  /** Token decimals; default 6 (listings are priced in micro-USDC). */
  decimals?: number;
}

/** A wallet that pays: a 0x private key, or a viem account (e.g. `loadSpendingWallet(...)`). */
export type WalletInput = string | LocalAccount | TypedDataSigner;

/** Options of {@link SkillMarket}. */
export interface SkillMarketOptions {
  /** Registry base URL, e.g. `http://localhost:3000`. Required. */
  apiUrl: string;
  /** Pays calls; discovery works without it. Never sent anywhere: only signatures leave the process. */
  wallet?: WalletInput;
  /** Consumer key `ck_…` (or a session JWT): favorites and usage records. */
  apiKey?: string;
  /** The network this client pays on; skills listed elsewhere are refused. Default `eip155:8453` (Base). */
  network?: string;
  /** Highest price of any one call, e.g. `"$0.05"`. Default: no cap beyond each skill's listed price. */
  maxPrice?: string | number;
  /** Most this client instance may spend in total, e.g. `"$1"`. Default: unlimited. */
  budget?: string | number;
  /** Extra tokens allowed besides each network's USDC. */
  assets?: AllowedAsset[];
  /** Default payment mode; default `standard`. */
  mode?: PaymentMode;
  /** Fetch implementation; default `globalThis.fetch`. */
  fetch?: FetchLike;
  /** How long a skill listing is reused, ms; default 30 000 (0 disables the cache). */
  cacheTtlMs?: number;
  /** Per-attempt HTTP timeout, ms; default 60 000. */
  timeoutMs?: number;
  /** Retries of a request that got no answer (same proof, never a new signature); default 2. */
  retries?: number;
  /** Longest authorization window accepted from a server, seconds; default 600. */
  maxTimeoutSeconds?: number;
  /**
   * How long a call keeps re-sending its proof (the same one) while the skill server answers
   * "payment pending" (409 `payment_pending`, honouring Retry-After), ms; default 120 000. Past
   * it the call fails with code `payment_pending` and `charged: 'unknown'` (or `'yes'`).
   */
  pendingTimeoutMs?: number;
  /**
   * How many times a request answered 503 with Retry-After ("unavailable, nothing was charged",
   * e.g. the skill server's payment facilitator is down) is sent again after the wait it asks
   * for, the same proof each time (never a new signature); default 3. 0 disables it.
   */
  unavailableRetries?: number;
  /** The most a call waits in total for those retries, ms; a Retry-After past it ends the call with the 503. Default 10 000. */
  unavailableMaxWaitMs?: number;
  /**
   * JSON-RPC URL of the payment network. Optional: when a call ends without telling whether the
   * payment went through, the token's `authorizationState` is read so `charged` is `'yes'` (or
   * `'no'` for an authorization that expired unused) instead of `'unknown'`, and the receipt
   * names the transaction that paid when its log is found.
   */
  rpcUrl?: string;
  /** Send proofs over plain http to non-loopback hosts; default false (loopback is always allowed). */
  allowHttp?: boolean;
  /** Record paid usage with the registry when `apiKey` is set; default true. */
  recordUsage?: boolean;
  /** Called when a background task (a usage record) fails; default: ignored. */
  onBackgroundError?: (error: unknown) => void;
}

/** Budget state in atomic micro-USDC. */
export interface SpendingSnapshot {
  /** Settled or possibly settled. */
  spent: bigint;
  /** Held by calls in flight. */
  reserved: bigint;
  budget: bigint | undefined;
  /** `budget - spent - reserved`, undefined without a budget. */
  remaining: bigint | undefined;
}
