/**
 * SkillMarket: the consumer's one object. Discovery (search, info, groups), favorites, and
 * `call()`, which pays a skill per call with x402 safely: the listing is the contract, limits are
 * checked before signing, a lost answer is retried with the same proof, usage is recorded after.
 */
import type { Address } from 'viem';
import { readAllowedAssets } from '../payment/assets';
import { channelScheme, createChannelReader, type ChannelReader, type ChannelScheme } from '../payment/schemes/channel';
import { type ChannelStore, fileChannelStore, memoryChannelStore } from '../payment/schemes/channel/store';
import { refundChannel } from '../payment/schemes/channel/refund-door';
import { exactScheme } from '../payment/schemes/exact';
import { uptoScheme } from '../payment/schemes/upto';
import type { PaymentScheme } from '../payment/scheme';
import { PAYMENT_DEFAULTS, PaymentPipeline } from '../payment/pipeline';
import { checkInput } from '../payment/preflight';
import { toPaymentSigner, type PaymentSigner } from '../payment/signer';
import { readAmount } from '../payment/spending';
import type { CallResult, PaymentMode, PaymentReceipt, SpendingSnapshot } from '../payment/types';
import { MarketError } from '../http/errors';
import { RegistryClient } from '../registry/client';
import type { ReviewView as Review } from '../registry/contract/index';
import { createAuthorizationStateReader, DEFAULT_NETWORK, normalizeNetwork, type Caip2Network } from '../x402/index';
import { ListingCache } from './cache';
import { Catalogues, type DiscoveredSkill, isResourceUrl } from './catalogues';
import { usageRecordOf } from './usage';
import type {
  CallOptions,
  ChannelRefund,
  ChannelView,
  FetchLike,
  Group,
  SearchFilters,
  SearchPage,
  Skill,
  SkillMarketOptions,
} from './types';

const DEFAULTS = { ...PAYMENT_DEFAULTS, cacheTtlMs: 30_000 };

/**
 * A client of the skill marketplace.
 *
 * @example
 * const market = new SkillMarket({ apiUrl: 'https://registry.example', wallet: process.env.MARKET_PRIVATE_KEY, budget: '$1' });
 * const { skills } = await market.search('translate');
 * const text = await market.call<{ text: string }>('translate-en-fr', { text: 'hello' }, { maxPrice: '$0.01' });
 */
export class SkillMarket {
  /** The paying address, when a wallet was given. */
  readonly address: Address | undefined;
  private readonly registry: RegistryClient;
  private readonly cache: ListingCache<Skill>;
  private readonly pipeline: PaymentPipeline;
  private readonly mode: PaymentMode;
  private readonly timeoutMs: number;
  private readonly background = new Set<Promise<void>>();
  private channelScheme: ChannelScheme | undefined;
  private channelStore: ChannelStore | undefined;
  private readonly signer: PaymentSigner | undefined;
  private readonly fetchImpl: FetchLike;
  private channelReader: ChannelReader | undefined;
  private readonly catalogues: Catalogues | undefined;

  /** @throws TypeError naming the option when one is missing or invalid */
  constructor(options: SkillMarketOptions) {
    if (typeof options !== 'object' || options === null) throw new TypeError('SkillMarket: options are required, at least { apiUrl }');
    if (typeof options.apiUrl !== 'string' || !URL.canParse(options.apiUrl) || !/^https?:$/.test(new URL(options.apiUrl).protocol)) {
      throw new TypeError('SkillMarket: apiUrl must be the registry http(s) URL, e.g. http://localhost:3000');
    }
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('SkillMarket: no fetch available; pass options.fetch');
    const timeoutMs = positiveInteger(options.timeoutMs, DEFAULTS.timeoutMs, 'timeoutMs');
    const retries = nonNegativeInteger(options.retries, DEFAULTS.retries, 'retries');
    let network: Caip2Network;
    try {
      network = normalizeNetwork(options.network ?? DEFAULT_NETWORK);
    } catch {
      throw new TypeError('SkillMarket: network must be a CAIP-2 id such as eip155:8453');
    }
    if (options.receipts !== undefined && options.receipts !== 'strict' && options.receipts !== 'flag')
      throw new TypeError("SkillMarket: receipts must be 'strict' or 'flag'");
    if (options.mode !== undefined && options.mode !== 'standard' && options.mode !== 'fast')
      throw new TypeError("SkillMarket: mode must be 'standard' or 'fast'");
    if (options.apiKey !== undefined && (typeof options.apiKey !== 'string' || options.apiKey.trim() === ''))
      throw new TypeError('SkillMarket: apiKey must be a non-empty string');
    const signer: PaymentSigner | undefined = options.wallet === undefined ? undefined : toPaymentSigner(options.wallet);
    if (
      options.rpcUrl !== undefined &&
      (typeof options.rpcUrl !== 'string' || !URL.canParse(options.rpcUrl) || !/^https?:$/.test(new URL(options.rpcUrl).protocol))
    ) {
      throw new TypeError('SkillMarket: rpcUrl must be an http(s) JSON-RPC URL');
    }
    if (options.depositCalls !== undefined && (!Number.isSafeInteger(options.depositCalls) || options.depositCalls < 1))
      throw new TypeError('SkillMarket: depositCalls must be a whole number of calls, at least 1');

    this.address = signer?.address;
    this.signer = signer;
    this.fetchImpl = fetchImpl;
    this.mode = options.mode ?? DEFAULTS.mode;
    this.timeoutMs = timeoutMs;
    this.registry = new RegistryClient({
      apiUrl: options.apiUrl,
      apiKey: options.apiKey,
      fetch: fetchImpl,
      timeoutMs,
      retry: { attempts: retries + 1 },
    });
    this.cache = new ListingCache(nonNegativeInteger(options.cacheTtlMs, DEFAULTS.cacheTtlMs, 'cacheTtlMs'));
    const discovery = options.discovery ?? [];
    if (!Array.isArray(discovery) || discovery.some((u) => typeof u !== 'string' || !isResourceUrl(u)))
      throw new TypeError('SkillMarket: discovery must be a list of http(s) base URLs of Bazaar discovery APIs');
    this.catalogues = discovery.length > 0 ? new Catalogues(discovery, network, fetchImpl, timeoutMs) : undefined;
    const recordUsage = options.recordUsage ?? true;
    const onError = options.onBackgroundError;
    this.pipeline = new PaymentPipeline({
      network,
      schemes: this.schemesFor(options, fetchImpl, timeoutMs),
      ...(signer ? { signer } : {}),
      policy: {
        allowed: readAllowedAssets(options.assets),
        maxTimeoutSeconds: positiveInteger(options.maxTimeoutSeconds, DEFAULTS.maxTimeoutSeconds, 'maxTimeoutSeconds'),
      },
      budget: atomic(options.budget, 'SkillMarket: budget'),
      maxPrice: atomic(options.maxPrice, 'SkillMarket: maxPrice'),
      allowHttp: options.allowHttp ?? false,
      checkInput,
      fetch: fetchImpl,
      timeoutMs,
      retries,
      pendingTimeoutMs: nonNegativeInteger(options.pendingTimeoutMs, DEFAULTS.pendingTimeoutMs, 'pendingTimeoutMs'),
      unavailable: {
        retries: nonNegativeInteger(options.unavailableRetries, DEFAULTS.unavailableRetries, 'unavailableRetries'),
        maxWaitMs: nonNegativeInteger(options.unavailableMaxWaitMs, DEFAULTS.unavailableMaxWaitMs, 'unavailableMaxWaitMs'),
      },
      lookup: (slug, fresh, signal) => this.lookup(slug, fresh, signal),
      paid: (receipt, skill, scheme) => {
        // A resource of another catalogue is not the registry's to count.
        if (!recordUsage || 'source' in skill) return;
        this.inBackground(this.recordUsage(receipt, skill, options.apiKey !== undefined, scheme), onError);
      },
      mode: this.mode,
      ...(options.receipts !== undefined ? { receipts: options.receipts } : {}),
    });
  }

  /**
   * Searches active skills. `query` is full text (may be empty); filters narrow it.
   *
   * @example
   * let page = await market.search('weather', { maxPrice: '$0.01', limit: 10 });
   * while (page.nextCursor) page = await market.search('weather', { limit: 10, cursor: page.nextCursor });
   */
  async search(query = '', filters: SearchFilters = {}): Promise<SearchPage> {
    const { verified, ...rest } = filters;
    const [page, elsewhere] = await Promise.all([
      this.registry.search({ ...rest, q: query, ...(verified === undefined ? {} : { verified: String(verified) }) }),
      this.catalogues && filters.cursor === undefined ? this.catalogues.search(query, filters.limit ?? 20) : undefined,
    ]);
    for (const skill of page.items) this.cache.set(skill.slug, skill);
    // The price filters hold for the other catalogues' finds too (theirs take a query only).
    const cap = atomic(filters.maxPrice, 'search: maxPrice');
    const floor = atomic(filters.minPrice, 'search: minPrice');
    const discovered = (elsewhere?.skills ?? []).filter(
      (s) => (cap === undefined || BigInt(s.priceAtomic) <= cap) && (floor === undefined || BigInt(s.priceAtomic) >= floor),
    );
    for (const skill of discovered) this.cache.set(skill.slug, skill);
    return { skills: page.items, nextCursor: page.nextCursor, discovered, catalogueProblems: elsewhere?.problems ?? [] };
  }

  /**
   * One skill's listing, always fresh from the registry (inactive ones too).
   *
   * @example
   * const skill = await market.info('weather-now');
   * console.log(skill.price, skill.network, skill.isActive, skill.inputSchema);
   */
  async info(slug: string): Promise<Skill> {
    return (await this.cache.get(slug, true, () => this.listing(slug))).value;
  }

  /**
   * Reviews of a skill by verified buyers, newest first (`limit` 1–100, `cursor` for the next page).
   *
   * @example const { reviews } = await market.reviews('weather-now', { limit: 5 });
   */
  async reviews(
    slug: string,
    page: { limit?: number; cursor?: string } = {},
  ): Promise<{ reviews: Review[]; nextCursor: string | undefined }> {
    const { items, nextCursor } = await this.registry.reviews(slug, page);
    return { reviews: items, nextCursor };
  }

  /**
   * Skill groups, optionally of one creator (wallet address).
   *
   * @example
   * const groups = await market.groups({ creator: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' });
   */
  groups(filters: { creator?: string } = {}): Promise<Group[]> {
    return this.registry.groups(filters.creator);
  }

  /**
   * Adds (default) or removes a favorite. Needs `apiKey`.
   *
   * @example await market.favorite('weather-now'); await market.favorite('weather-now', false);
   */
  async favorite(slug: string, add = true): Promise<{ favorited: boolean; favoriteCount: number }> {
    const { skill } = await this.lookup(slug, false);
    const { favorited, favoriteCount } = await this.registry.favorite(skill.id, add, slug);
    return { favorited, favoriteCount };
  }

  /**
   * Calls a skill and pays for it; returns the handler's result. See {@link callWithReceipt}.
   *
   * @example const { text } = await market.call<{ text: string }>('translate', { text: 'hi' });
   */
  async call<T = unknown>(slug: string, input: unknown, options: CallOptions = {}): Promise<T> {
    return (await this.callWithReceipt<T>(slug, input, options)).result;
  }

  /**
   * Calls a skill and pays for it: looks the listing up (cached 30 s), validates `input` against
   * its inputSchema, checks price limits, POSTs to the endpoint, checks the 402 terms against the
   * listing (payTo, exact price, network, asset), reserves the price from the budget, signs an
   * EIP-3009 authorization, re-POSTs with the proof, and returns the result with the receipt.
   * Nothing is signed when a check fails. When the server answers "payment pending" (409
   * `payment_pending`: the call ran, the transfer is not confirmed yet), the same proof is sent
   * again after Retry-After until the result comes, for up to `pendingTimeoutMs`; a 503 with
   * Retry-After (nothing charged) is retried the same way (`unavailableRetries`). An error that
   * leaves the payment open (a lost answer, "nonce already used", pending) says `charged:
   * 'unknown'`, or what the chain says with `rpcUrl`, and keeps the price counted against the
   * budget. Usage is recorded in the background when `apiKey` is set.
   *
   * @example
   * const { result, receipt } = await market.callWithReceipt('weather-now', { city: 'Paris' }, { mode: 'fast' });
   * console.log(receipt?.transaction);
   * @throws InputValidationError, TermsMismatchError, SpendingLimitError, SkillCallError, RegistryError or MarketError (see `code`)
   */
  async callWithReceipt<T = unknown>(slug: string, input: unknown, options: CallOptions = {}): Promise<CallResult<T>> {
    const mode = options.mode ?? this.mode;
    if (mode !== 'standard' && mode !== 'fast') throw new TypeError("call: mode must be 'standard' or 'fast'");
    if (typeof slug !== 'string' || slug === '') throw new TypeError('call: slug must be a non-empty string');
    return this.pipeline.call<T>(slug, input, {
      mode,
      maxPrice: atomic(options.maxPrice, 'call: maxPrice'),
      timeoutMs: positiveInteger(options.timeoutMs, this.timeoutMs, 'timeoutMs'),
      signal: options.signal,
      budgetLeft: atomic(options.budgetLeft, 'call: budgetLeft'),
      beforePay: options.beforePayment,
      trial: options.trial ?? true,
    });
  }

  /**
   * What this instance has spent and holds, in atomic micro-USDC.
   *
   * @example
   * const market = new SkillMarket({ apiUrl, wallet, budget: '$1' });
   * await market.call('weather-now', { city: 'Paris' });
   * formatPriceUsd(market.spending.remaining ?? 0n); // e.g. '$0.999'
   */
  get spending(): SpendingSnapshot {
    return this.pipeline.spending;
  }

  /**
   * Waits for background work (usage records) to finish; call before a short-lived process exits.
   *
   * @example
   * await market.call('weather-now', { city: 'Paris' });
   * await market.flush(); // the usage record is sent before the script ends
   */
  async flush(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  /**
   * The payment channels this client knows (its channel store): the server it pays, what it
   * deposited, what the server charged; with `rpcUrl` also what the server claimed on chain and
   * a pending withdrawal. Deposits are escrow: `spending` counts only the charges.
   *
   * @example
   * for (const c of await market.channels()) console.log(c.receiver, c.deposit, c.charged, c.claimed);
   */
  async channels(): Promise<ChannelView[]> {
    const records = (await this.channelScheme?.channels()) ?? [];
    return Promise.all(
      records.map(async (record) => {
        const onChain = await this.channelReader?.read(record.channelId).catch(() => undefined);
        return {
          channelId: record.channelId,
          network: record.network,
          receiver: record.config.receiver,
          token: record.config.token,
          endpoint: record.endpoint,
          deposit: record.balance,
          charged: record.charged,
          claimed: onChain?.totalClaimed.toString(),
          withdrawing: onChain && onChain.withdrawAmount > 0n ? onChain.withdrawAmount.toString() : undefined,
          stopped: record.stopped,
          config: record.config,
        };
      }),
    );
  }

  /**
   * Asks a channel's server for the unspent deposit back (a cooperative refund): the wallet signs
   * a zero-charge voucher, the server claims what it charged and its facilitator returns the rest
   * to the wallet in one transaction it pays for. No ETH is needed. `amount` (atomic units) asks
   * part of it. A server that does not cooperate answers `refused` with the reason; nothing moved.
   *
   * @example
   * for (const c of await market.channels()) console.log(await market.refundChannel(c.channelId));
   * @throws MarketError('channel_not_found') for a channel this client has no record of; TypeError without a wallet
   */
  async refundChannel(channelId: `0x${string}`, options: { amount?: bigint | string } = {}): Promise<ChannelRefund> {
    if (!this.signer) throw new TypeError('SkillMarket: refundChannel needs a wallet (option wallet)');
    const record = await this.channelStore?.get(channelId);
    if (!record)
      throw new MarketError('channel_not_found', `no payment channel ${channelId} in this client's channel store`, { charged: 'no' });
    const amount = options.amount === undefined ? undefined : BigInt(options.amount);
    const outcome = await refundChannel({
      record,
      signer: this.signer,
      fetch: this.fetchImpl,
      ...(amount === undefined ? {} : { amount }),
    });
    if (outcome.type === 'refused')
      return { status: 'refused', channelId: record.channelId, reason: outcome.reason, message: outcome.message };
    await this.channelStore!.set({ ...record, balance: outcome.balance.toString(), charged: outcome.charged.toString(), resync: false });
    return { status: 'refunded', channelId: record.channelId, amount: outcome.amount.toString(), transaction: outcome.transaction };
  }

  private schemesFor(options: SkillMarketOptions, fetchImpl: FetchLike, timeoutMs: number): PaymentScheme[] {
    const payment = options.payment ?? 'auto';
    if (payment !== 'auto' && payment !== 'exact' && payment !== 'channel' && payment !== 'upto')
      throw new TypeError("SkillMarket: payment must be 'auto', 'exact', 'channel' or 'upto'");
    const rpc = { fetch: fetchImpl, timeoutMs: Math.min(timeoutMs, 10_000) };
    const exact = exactScheme(options.rpcUrl === undefined ? {} : { chain: createAuthorizationStateReader(options.rpcUrl, rpc) });
    if (payment === 'exact') return [exact];
    // Usage-based prices where offered (the wallet approved Permit2 on the token once), else exact.
    if (payment === 'upto') return [uptoScheme(), exact];
    const channels = options.channels;
    if (
      channels !== undefined &&
      typeof channels !== 'string' &&
      (typeof channels !== 'object' || channels === null || typeof channels.get !== 'function')
    )
      throw new TypeError('SkillMarket: channels must be a file path or a channel store');
    if (typeof channels === 'string' && channels.trim() === '')
      throw new TypeError('SkillMarket: channels must be a file path or a channel store');
    this.channelReader = options.rpcUrl === undefined ? undefined : createChannelReader(options.rpcUrl, rpc);
    this.channelStore = typeof channels === 'string' ? fileChannelStore(channels) : (channels ?? memoryChannelStore());
    this.channelScheme = channelScheme({
      maxDeposit: atomic(options.maxDeposit, 'SkillMarket: maxDeposit'),
      ...(options.depositCalls !== undefined ? { depositCalls: options.depositCalls } : {}),
      store: this.channelStore,
      ...(this.channelReader ? { chain: this.channelReader } : {}),
    });
    return payment === 'channel' ? [this.channelScheme] : [this.channelScheme, exact];
  }

  private async lookup(slug: string, fresh: boolean, signal?: AbortSignal): Promise<{ skill: Skill; cached: boolean }> {
    const { value, cached } = await this.cache.get(slug, fresh, () => this.listing(slug, signal));
    return { skill: value, cached };
  }

  /** A registry listing by slug, or by URL a resource of another catalogue (option `discovery`). */
  private async listing(slug: string, signal?: AbortSignal): Promise<Skill> {
    if (!isResourceUrl(slug)) return this.registry.skill(slug, signal);
    const found: DiscoveredSkill | undefined = await this.catalogues?.find(slug, signal);
    if (!found) {
      const where = this.catalogues ? this.catalogues.sources.join(', ') : 'no catalogue (option discovery)';
      throw new MarketError('skill_not_found', `${slug} is listed in ${where === '' ? 'no catalogue' : `none of ${where}`}`, { slug });
    }
    return found;
  }

  /**
   * With an API key, the call joins the caller's history (a channel call as one: its channel and
   * cumulative charge, never a voucher as a transfer); without one, an on-chain payment is still
   * reported (credential-free, verified by the registry on chain), so the creator's counts and the
   * skill's popularity include it (an `exact` transfer only: the skill server reports channel calls).
   */
  private async recordUsage(receipt: PaymentReceipt, skill: Skill, keyed: boolean, scheme: string): Promise<void> {
    if (keyed) {
      const record = usageRecordOf(receipt);
      if (record) await this.registry.recordUsage(record, skill.slug);
      return;
    }
    if (scheme !== 'exact' || !receipt.transaction) return;
    const report = { skillSlug: skill.slug, consumerAddress: receipt.payer, paymentTxHash: receipt.transaction, amount: skill.priceAtomic };
    await this.registry.recordUsage(report, skill.slug);
  }

  private inBackground(task: Promise<void>, onError: ((error: unknown) => void) | undefined): void {
    const tracked = task.catch((error: unknown) => {
      try {
        onError?.(error);
      } catch {
        // a failing error hook must not surface as an unhandled rejection
      }
    });
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }
}

/** An optional amount option (`"$0.01"`) in atomic units; undefined when not given. */
function atomic(value: string | number | undefined, what: string): bigint | undefined {
  return value === undefined ? value : readAmount(value, what);
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`SkillMarket: ${name} must be a positive integer`);
  return value;
}

function nonNegativeInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`SkillMarket: ${name} must be a non-negative integer`);
  return value;
}
