/**
 * The consumer client's public data shapes: what the registry lists, what a call returns, and
 * the options that shape both.
 */
import type { FetchLike } from '../http/exchange';
import type { ChannelStore } from '../payment/schemes/channel/store';
import type { ChannelConfig } from '../x402/index';
import type { AllowedAsset, PaymentMode } from '../payment/types';
import type { ReceiptMode } from '../payment/receipt-check';
import type { PaymentQuote } from '../payment/call';
import type { WalletInput } from '../payment/signer';
import type { SearchQuery } from '../registry/contract/index';
import type { Skill } from '../registry/read';
import type { CatalogueProblem, DiscoveredSkill } from './catalogues';

export type { FetchLike };
/** A skill as the registry lists it (`GET /skills/:slug`), checked by the client (see skill-market/registry). */
export type { Skill } from '../registry/read';
/** A skill group (`GET /groups`). */
export type { GroupView as Group } from '../registry/contract/index';

/** Filters of {@link SkillMarket.search} (the registry's search query but the text); prices are USDC amounts such as `"$0.01"`. */
export type SearchFilters = Omit<SearchQuery, 'q' | 'verified'> & { verified?: boolean };

/** One page of search results. */
export interface SearchPage {
  /** Matches in the registry (`apiUrl`). */
  skills: Skill[];
  /** Pass as `filters.cursor` for the next page; undefined on the last page. */
  nextCursor: string | undefined;
  /**
   * Matches in the other catalogues (option `discovery`), each with its `source`, on the first
   * page only; call one by its URL (`slug` and `endpoint`). Empty without catalogues.
   */
  discovered: DiscoveredSkill[];
  /** Catalogues that could not be read this time, and why. */
  catalogueProblems: CatalogueProblem[];
}

/** A payment channel as {@link SkillMarket.channels} lists it; amounts in atomic token units. */
export interface ChannelView {
  channelId: `0x${string}`;
  network: string;
  /** The server's payTo. */
  receiver: `0x${string}`;
  token: `0x${string}`;
  /** The skill endpoint that opened it. */
  endpoint: string | undefined;
  /** Deposited and not withdrawn (escrow), as this client knows it. */
  deposit: string;
  /** What the server charged in all (the last voucher's base). */
  charged: string;
  /** What the server claimed on chain; undefined without `rpcUrl`. */
  claimed: string | undefined;
  /** A timed withdrawal in progress, when any. */
  withdrawing: string | undefined;
  /** Why no more vouchers are signed on it, when a server misbehaved. */
  stopped: string | undefined;
  /** The channel's configuration (for `initiateWithdraw`). */
  config: ChannelConfig;
}

/** What {@link SkillMarket.refundChannel} came to; amounts in atomic token units. */
export type ChannelRefund =
  /** The unspent deposit (`amount`) is back in the wallet, in `transaction`; the facilitator paid its gas. */
  | { status: 'refunded'; channelId: `0x${string}`; amount: string; transaction: `0x${string}` }
  /**
   * The server did not give it back (gone, no longer offering the channel, unable to have refunds
   * signed): nothing moved. `message` says why in plain words; the timed withdrawal on chain
   * (`initiateWithdraw`, then `finalizeWithdraw` after the channel's delay) still returns it.
   */
  | { status: 'refused'; channelId: `0x${string}`; reason: string; message: string };

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
  /** What an outer budget leaves for this call, price included: a channel deposit stays within it. */
  budgetLeft?: string | number;
  /** Given the checked quote (its channel `deposit` too) before anything is signed; throwing stops the call. */
  beforePayment?: (quote: PaymentQuote) => void | Promise<void>;
  /**
   * Use a free trial the skill offers (its 402's x402 `sign-in-with-x`, signed by the wallet: no
   * gas, no payment) while the wallet has trial calls left; the result says `trial: true` and
   * `trialCallsLeft`. Default true; false always pays.
   */
  trial?: boolean;
}

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
  /**
   * What a paid answer whose signed receipt is refused does (another signer than the listing's
   * `receiptSigner`, another amount, body, payer or payment): `strict` (default) throws
   * `ReceiptError`, which keeps the result (`error.result`: the payment happened); `flag` returns
   * the result with `receipt.signed = { valid: false, reason }`. A valid receipt is returned as
   * `receipt.signed = { valid: true, receipt }` and sent with the usage record.
   */
  receipts?: ReceiptMode;
  /**
   * How calls pay when a server offers both: `exact` (one on-chain transfer per call), `channel`
   * (x402 `batch-settlement`: one deposit into a payment channel, then an off-chain voucher per
   * call), or `auto` (default): a channel when the server offers one and `maxDeposit` covers at
   * least three calls at the price, else `exact`. `upto` pays usage-based prices (x402 `upto`: a
   * signed maximum, the server settles what the call used) where offered, else `exact`; the wallet
   * must have approved Permit2 on the token once (an on-chain approve it sends itself).
   */
  payment?: 'auto' | 'exact' | 'channel' | 'upto';
  /**
   * Most one channel deposit may be, e.g. `"$1"` (default). Deposits are escrow, not spending:
   * `budget` counts what each call is charged; what a channel holds is listed by {@link SkillMarket.channels}.
   */
  maxDeposit?: string | number;
  /**
   * How many calls at the price a channel's deposit aims to cover (default 10; `depositFor` is the
   * policy), never above `maxDeposit` nor what `budget` leaves. A client that knows it will make
   * many calls deposits once for them all (one on-chain wait instead of several).
   */
  depositCalls?: number;
  /**
   * Where payment channels are kept between runs: a JSON file path (Node, Bun) or a
   * {@link ChannelStore}. Default in memory; a lost record is recovered from the chain (`rpcUrl`)
   * and the server's corrective answer.
   */
  channels?: string | ChannelStore;
  /**
   * Other catalogues to search beside the registry: base URLs of Bazaar-compatible discovery APIs
   * (the x402 `bazaar` extension's `/discovery/search` and `/discovery/resources`, e.g. a
   * facilitator's). Their resources payable on `network` come back in {@link SearchPage.discovered}
   * with their `source`, and are called by their URL in place of a slug, under the same terms
   * checks and limits (the resource's listed `accepts` is the contract). Default none.
   *
   * @example new SkillMarket({ apiUrl, wallet, discovery: ['https://facilitator.example'] })
   */
  discovery?: string[];
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
   * names the transaction that paid when its log is found. With channels, it recovers a channel
   * this client has no record of and shows what the server claimed.
   */
  rpcUrl?: string;
  /** Send proofs over plain http to non-loopback hosts; default false (loopback is always allowed). */
  allowHttp?: boolean;
  /** Record paid usage with the registry when `apiKey` is set; default true. */
  recordUsage?: boolean;
  /** Called when a background task (a usage record) fails; default: ignored. */
  onBackgroundError?: (error: unknown) => void;
}
