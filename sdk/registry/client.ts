/**
 * The one typed client of a registry, on the SDK's HTTP core: every endpoint the SDK, the CLI,
 * the MCP server and the web pages use, each answer checked against the wire contract, every
 * error answer a {@link RegistryError} carrying the registry's `{error, code, requestId}`.
 * Requests that are safe to repeat (reads, upserts, updates) are retried when no answer came or
 * the registry answered 429 or 5xx, honouring Retry-After; other writes are sent once, since a
 * lost answer may mean they were applied.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { excerpt, MarketError, NoAnswerError, RegistryError } from '../http/errors';
import { type Answer, exchange, type FetchLike, isRecord, parseJson } from '../http/exchange';
import { retryAfterMs, sleep } from '../http/wait';
import * as c from './contract/index';
import { type AnswerContext, type RegisteredSkill, RegisteredSkillSchema, readAnswer, readSkill, readSkills, type Skill } from './read';

/**
 * The registry a client talks to unless told otherwise: `market registry` on this machine.
 *
 * @example
 * new RegistryClient({ apiUrl: process.env.MARKET_API_URL ?? DEFAULT_API_URL }); // else http://localhost:3000
 */
export const DEFAULT_API_URL = 'http://localhost:3000';

/** Retries of requests that are safe to repeat. */
export interface RetryOptions {
  /** Tries in all, the first included; default 3. */
  attempts?: number;
  /** First back-off delay in ms, doubled each time (with jitter); default 300. */
  baseDelayMs?: number;
  /** Longest delay in ms, also the cap on a Retry-After; default 5000. */
  maxDelayMs?: number;
}

/** Options of {@link RegistryClient}: where the registry is, how to sign in, and the transport's limits. */
export interface RegistryClientOptions {
  /** Registry base URL, e.g. `http://localhost:3000`; `''` for the page's own origin. */
  apiUrl: string;
  /** An API key (`sk_…`, `ck_…`) or a session token, sent as a Bearer credential. */
  apiKey?: string | undefined;
  /** The session cookies authenticate (a page on the registry's own origin); no key needed. */
  cookies?: boolean;
  fetch?: FetchLike;
  /** Per attempt, ms; default 15 000. */
  timeoutMs?: number;
  retry?: RetryOptions;
  userAgent?: string;
}

/** One page of a paged list; `nextCursor` (from X-Next-Cursor) is undefined on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | undefined;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type Query = Record<string, string | number | boolean | undefined | null>;

interface SendOptions {
  what: string;
  slug?: string | undefined;
  query?: Query | undefined;
  body?: unknown;
  /** Needs a credential (an API key, a session token or the session cookies). */
  auth?: boolean;
  /** Safe to send again: retried on no answer, 429 and 5xx. */
  repeatable?: boolean;
  signal?: AbortSignal | undefined;
  /** A credential for this request only (an identity-provider token), in place of the API key. */
  bearer?: string;
}

const MAX_CURSOR_LENGTH = 512;
const segment = encodeURIComponent;

/**
 * The one typed client of a registry's HTTP API, as the consumer, the creator SDK, the CLI and the
 * pages use it: requests and answers checked against the contract, a timeout, bounded reads,
 * retries of repeatable requests (honouring Retry-After), and one {@link RegistryError} for every
 * refusal.
 *
 * @example
 * import { RegistryClient, RegistryError } from 'skill-market/registry';
 *
 * const registry = new RegistryClient({ apiUrl: 'https://registry.example', apiKey: process.env.MARKET_API_KEY });
 * const page = await registry.search({ q: 'weather', limit: 10 });
 * try {
 *   const listing = await registry.skill('weather-now');
 *   console.log(listing.price, listing.endpoint);
 * } catch (error) {
 *   if (error instanceof RegistryError && error.status === 404) console.log('no such skill');
 *   else throw error;
 * }
 */
export class RegistryClient {
  private readonly base: string;
  private readonly fetch: FetchLike;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: RegistryClientOptions) {
    this.base = options.apiUrl.replace(/\/+$/, '');
    const fetchImpl = options.fetch ?? globalThis.fetch;
    this.fetch = (input, init) => fetchImpl(input, init);
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.attempts = Math.max(1, options.retry?.attempts ?? 3);
    this.baseDelayMs = options.retry?.baseDelayMs ?? 300;
    this.maxDelayMs = options.retry?.maxDelayMs ?? 5000;
  }

  /** The registry base URL, without a trailing slash. */
  get url(): string {
    return this.base;
  }

  // Discovery (no credential)

  /**
   * `GET /skills`: one page of active skills matching the query and filters.
   *
   * @example
   * let cursor: string | undefined;
   * do {
   *   const page = await registry.search({ q: 'weather', sort: 'popular', limit: 50, cursor });
   *   for (const skill of page.items) console.log(skill.slug, skill.price);
   *   cursor = page.nextCursor;
   * } while (cursor);
   */
  async search(query: c.SearchQuery = {}, signal?: AbortSignal): Promise<Page<Skill>> {
    const answer = await this.send('GET', '/skills', { what: 'search', query: { q: '', ...query }, repeatable: true, signal });
    return { items: readSkills(this.json(answer, 'skill list'), this.context(answer, 'skill list')), nextCursor: this.cursor(answer) };
  }

  /** `GET /skills/:slug` (inactive ones too). @throws RegistryError('skill_not_found') on 404 */
  async skill(slug: string, signal?: AbortSignal): Promise<Skill> {
    const what = `skill ${slug}`;
    const answer = await this.send('GET', `/skills/${segment(slug)}`, { what, slug, repeatable: true, signal });
    const skill = readSkill(this.json(answer, 'skill', slug), this.context(answer, 'skill', slug));
    if (skill.slug !== slug) {
      throw new MarketError('invalid_response', `The registry answered skill ${skill.slug} for ${slug}`, { status: answer.status, slug });
    }
    return skill;
  }

  /** `GET /groups[?creator=]`. */
  groups(creator?: string, signal?: AbortSignal): Promise<c.GroupView[]> {
    return this.read(c.GroupList, 'GET', '/groups', { what: 'groups', query: { creator }, repeatable: true, signal });
  }

  /** `GET /groups/:slug`: the group, its creator and its active skills. */
  group(slug: string, creator?: string, signal?: AbortSignal): Promise<c.GroupDetail> {
    return this.read(c.GroupDetail, 'GET', `/groups/${segment(slug)}`, {
      what: `group ${slug}`,
      query: { creator },
      repeatable: true,
      signal,
    });
  }

  /** `GET /creators/:address`: a public profile with the creator's active skills. */
  creator(address: string, signal?: AbortSignal): Promise<c.CreatorWithSkills> {
    return this.read(c.CreatorWithSkills, 'GET', `/creators/${segment(address)}`, { what: 'creator', repeatable: true, signal });
  }

  /** `GET /skills/:slug/reviews`: verified buyers' reviews, newest first. */
  async reviews(slug: string, query: c.ReviewsQuery = {}, signal?: AbortSignal): Promise<Page<c.ReviewView>> {
    const answer = await this.send('GET', `/skills/${segment(slug)}/reviews`, { what: 'reviews', slug, query, repeatable: true, signal });
    return { items: this.check(c.ReviewList, answer, 'review list'), nextCursor: this.cursor(answer) };
  }

  /** `GET /analytics/:skillId`: a skill's counters and daily series (`days`, default 30). */
  analytics(skillId: string, days?: number, signal?: AbortSignal): Promise<c.Analytics> {
    return this.read(c.Analytics, 'GET', `/analytics/${segment(skillId)}`, {
      what: 'analytics',
      query: { days },
      repeatable: true,
      signal,
    });
  }

  /** `POST /analytics/view`: a page view, counted once per visitor within the registry's window. */
  recordView(skillId: string): Promise<c.Recorded> {
    return this.read(c.Recorded, 'POST', '/analytics/view', { what: 'view', body: { skillId } });
  }

  // A consumer's own (consumer key, session)

  /** `POST /analytics/favorite`. */
  favorite(skillId: string, add: boolean, slug?: string): Promise<c.FavoriteResult> {
    const body: c.FavoriteBody = { skillId, action: add ? 'add' : 'remove' };
    return this.read(c.FavoriteResult, 'POST', '/analytics/favorite', { what: 'favorite', slug, auth: true, body });
  }

  /** `GET /analytics/favorites`: favourite skills, most recent first. */
  async favorites(signal?: AbortSignal): Promise<Skill[]> {
    const answer = await this.send('GET', '/analytics/favorites', { what: 'favourites', auth: true, repeatable: true, signal });
    return readSkills(this.json(answer, 'skill list'), this.context(answer, 'skill list'));
  }

  /**
   * `POST /analytics/usage`: a paid call, counted once per payment reference. With consumer
   * credentials, `{skillId, amount, paymentRef}`; without, the payment itself
   * (`{skillSlug, consumerAddress, paymentTxHash, amount}`), believed once verified on chain.
   *
   * @example
   * await registry.recordUsage({ skillId: skill.id, amount: '1000', paymentRef: receipt.transaction }); // 1000 micro-USDC = $0.001
   */
  recordUsage(record: c.UsageBody | c.ReportedPayment, slug?: string): Promise<c.Recorded> {
    const auth = !('skillSlug' in record); // a reported payment needs no credential
    return this.read(c.Recorded, 'POST', '/analytics/usage', { what: 'usage record', slug, auth, body: record });
  }

  /**
   * `GET /analytics/:skillId/payments`: the payments reported for one of your skills with their
   * on-chain check, newest first; `state: 'rejected'` lists the ones that never counted, a
   * reverted transfer among them (`reason` is `PAYMENT_REVERTED_REASON`). The skill's creator only.
   *
   * @example
   * const { items } = await registry.skillPayments(skillId, { state: 'rejected', limit: 10 });
   * for (const payment of items) console.log(payment.txHash, payment.amount, payment.reason);
   */
  async skillPayments(skillId: string, query: c.SkillPaymentsQuery = {}, signal?: AbortSignal): Promise<Page<c.SkillPaymentView>> {
    const answer = await this.send('GET', `/analytics/${segment(skillId)}/payments`, {
      what: 'skill payments',
      query,
      auth: true,
      repeatable: true,
      signal,
    });
    return { items: this.check(c.SkillPaymentList, answer, 'skill payment list'), nextCursor: this.cursor(answer) };
  }

  /**
   * `GET /analytics/usage`: the caller's paid calls, newest first.
   *
   * @example
   * const { items, nextCursor } = await registry.usage({ limit: 100 });
   * for (const record of items) console.log(record.skillSlug, record.amount, record.verification);
   */
  async usage(query: c.UsageQuery = {}, signal?: AbortSignal): Promise<Page<c.UsageRecordView>> {
    const answer = await this.send('GET', '/analytics/usage', { what: 'usage history', query, auth: true, repeatable: true, signal });
    return { items: this.check(c.UsageRecordList, answer, 'usage history'), nextCursor: this.cursor(answer) };
  }

  /**
   * `GET /analytics/channels`: the caller's payment channels, newest first: those of their skills
   * (`receiver`, the default) with calls earned, claimed and settled, or those their wallets pay
   * from (`payer`) with balance and charges.
   *
   * @example
   * const channels = await registry.channels('payer');
   * for (const ch of channels) console.log(ch.channelId, ch.balanceAtomic, ch.chargedAtomic, ch.state);
   */
  channels(role: 'receiver' | 'payer' = 'receiver', signal?: AbortSignal): Promise<c.ChannelView[]> {
    return this.read(c.ChannelList, 'GET', '/analytics/channels', {
      what: 'channel list',
      query: { role },
      auth: true,
      repeatable: true,
      signal,
    });
  }

  /**
   * `POST /reviews`: review a skill you paid for; `created` is false when your review was updated.
   *
   * @example
   * const { created } = await registry.postReview({ skillSlug: 'word-count', score: 5, comment: 'Fast and exact' });
   */
  async postReview(review: c.PostReview): Promise<{ review: c.ReviewView; created: boolean }> {
    const answer = await this.send('POST', '/reviews', { what: 'review', slug: review.skillSlug, auth: true, body: review });
    return { review: this.check(c.ReviewView, answer, 'review'), created: answer.status === 201 };
  }

  // A creator's own (creator key, session)

  /**
   * `POST /skills`: registers the caller's skill of that name, or updates it (an upsert).
   *
   * @example
   * const registry = new RegistryClient({ apiUrl: 'https://registry.example', apiKey: process.env.MARKET_API_KEY }); // sk_…
   * const { skill, created } = await registry.registerSkill({
   *   name: 'word-count',
   *   endpoint: 'https://skills.example.com',
   *   price: '$0.001',
   *   paymentAddress: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
   *   groups: ['text'],
   * });
   */
  async registerSkill(body: c.RegisterSkill): Promise<{ skill: RegisteredSkill; created: boolean }> {
    const answer = await this.send('POST', '/skills', { what: `registration of ${body.name}`, auth: true, body, repeatable: true });
    return { skill: this.check(RegisteredSkillSchema, answer, 'skill'), created: answer.status === 201 };
  }

  /**
   * `PATCH /skills/:slug`: groups replace the whole set.
   *
   * @example
   * await registry.updateSkill('word-count', { price: '$0.002', isActive: true }); // the answer is the updated SkillView
   */
  updateSkill(slug: string, body: c.UpdateSkill): Promise<c.SkillView> {
    return this.read(c.SkillView, 'PATCH', `/skills/${segment(slug)}`, {
      what: `update of ${slug}`,
      slug,
      auth: true,
      body,
      repeatable: true,
    });
  }

  /** `GET /creators/me/skills`: all the caller's skills, inactive ones included. */
  ownSkills(signal?: AbortSignal): Promise<c.SkillView[]> {
    return this.read(c.SkillList, 'GET', '/creators/me/skills', { what: 'own skills', auth: true, repeatable: true, signal });
  }

  /** `POST /analytics/call`: one execution of the caller's skill, sent once (call tracking keeps its own schedule). */
  recordCall(body: c.CallBody): Promise<c.Recorded> {
    return this.read(c.Recorded, 'POST', '/analytics/call', { what: 'call record', auth: true, body });
  }

  /**
   * `POST /analytics/calls`: up to {@link c.MAX_CALL_BATCH} executions of the caller's skills in one
   * request, sent once; one outcome per record, in order. A registry without the route answers 404.
   */
  recordCalls(calls: c.CallBody[]): Promise<c.CallsResult> {
    return this.read(c.CallsResult, 'POST', '/analytics/calls', { what: 'call records', auth: true, body: { calls } });
  }

  /** `POST /groups`: a new group of the caller's skills (a creator key). */
  createGroup(body: c.CreateGroup): Promise<c.GroupView> {
    return this.read(c.GroupView, 'POST', '/groups', { what: 'new group', auth: true, body });
  }

  /** `PATCH /groups/:slug`: the name, description or icon of one of the caller's groups. */
  updateGroup(slug: string, body: c.UpdateGroup): Promise<c.GroupView> {
    return this.read(c.GroupView, 'PATCH', `/groups/${segment(slug)}`, {
      what: `update of group ${slug}`,
      auth: true,
      body,
      repeatable: true,
    });
  }

  /** `DELETE /groups/:slug` (409 while a skill uses it). */
  deleteGroup(slug: string): Promise<c.Success> {
    return this.read(c.Success, 'DELETE', `/groups/${segment(slug)}`, { what: `deletion of group ${slug}`, auth: true });
  }

  /** `POST /reviews/:id/reply`: the creator's one answer to a review of their skill. */
  replyToReview(id: string, comment: string): Promise<c.ReviewView> {
    return this.read(c.ReviewView, 'POST', `/reviews/${segment(id)}/reply`, { what: 'reply', auth: true, body: { comment } });
  }

  // Account (session; the profile also with a key)

  /** `GET /creators/me`. */
  me(signal?: AbortSignal): Promise<c.Creator> {
    return this.read(c.Creator, 'GET', '/creators/me', { what: 'profile', auth: true, repeatable: true, signal });
  }

  /** `PATCH /creators/me`: the caller's public profile. */
  updateProfile(body: c.ProfileUpdate): Promise<c.Creator> {
    return this.read(c.Creator, 'PATCH', '/creators/me', { what: 'profile update', auth: true, body, repeatable: true });
  }

  /** `GET /auth/api-keys`: the caller's API keys, each by its prefix (never the key itself). */
  apiKeys(signal?: AbortSignal): Promise<c.ApiKeyView[]> {
    return this.read(c.ApiKeyList, 'GET', '/auth/api-keys', { what: 'API keys', auth: true, repeatable: true, signal });
  }

  /** `POST /auth/api-keys`: the full key is in this answer only. */
  createApiKey(body: c.CreateApiKeyRequest): Promise<c.CreatedApiKey> {
    return this.read(c.CreatedApiKey, 'POST', '/auth/api-keys', { what: 'new API key', auth: true, body });
  }

  /** `DELETE /auth/api-keys/:id`: revokes one of the caller's API keys. */
  revokeApiKey(id: string): Promise<c.Success> {
    return this.read(c.Success, 'DELETE', `/auth/api-keys/${segment(id)}`, { what: 'API key revocation', auth: true });
  }

  /** `GET /webhooks`: the signed-in account's webhook endpoints (never their secrets). */
  webhooks(signal?: AbortSignal): Promise<c.WebhookView[]> {
    return this.read(c.WebhookList, 'GET', '/webhooks', { what: 'webhooks', auth: true, repeatable: true, signal });
  }

  /** `POST /webhooks`: the signing secret is in this answer only. */
  createWebhook(body: c.CreateWebhook): Promise<c.CreatedWebhook> {
    return this.read(c.CreatedWebhook, 'POST', '/webhooks', { what: 'new webhook', auth: true, body });
  }

  /** `PATCH /webhooks/:id`: the URL, the events, or on/off. */
  updateWebhook(id: string, body: c.UpdateWebhook): Promise<c.WebhookView> {
    return this.read(c.WebhookView, 'PATCH', `/webhooks/${segment(id)}`, { what: 'webhook', auth: true, body });
  }

  /** `DELETE /webhooks/:id`. */
  deleteWebhook(id: string): Promise<c.Success> {
    return this.read(c.Success, 'DELETE', `/webhooks/${segment(id)}`, { what: 'webhook removal', auth: true });
  }

  /** `GET /webhooks/:id/deliveries`: the latest deliveries with their attempts. */
  webhookDeliveries(id: string, signal?: AbortSignal): Promise<c.WebhookDeliveryView[]> {
    const path = `/webhooks/${segment(id)}/deliveries`;
    return this.read(c.WebhookDeliveryList, 'GET', path, { what: 'webhook deliveries', auth: true, repeatable: true, signal });
  }

  /** `POST /webhooks/:id/test`: queues a `webhook.test` event for this endpoint. */
  testWebhook(id: string): Promise<c.Success> {
    return this.read(c.Success, 'POST', `/webhooks/${segment(id)}/test`, { what: 'test event', auth: true, body: {} });
  }

  /** `POST /webhooks/:id/deliveries/:deliveryId/retry`: sends a delivery again now. */
  redeliverWebhook(id: string, deliveryId: string): Promise<c.Success> {
    const path = `/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}/retry`;
    return this.read(c.Success, 'POST', path, { what: 'redelivery', auth: true, body: {} });
  }

  /** `POST /auth/challenge`: the EIP-4361 message to sign. */
  challenge(address: string): Promise<c.ChallengeResponse> {
    return this.read(c.ChallengeResponse, 'POST', '/auth/challenge', { what: 'sign-in challenge', body: { address } });
  }

  /** `POST /auth/privy`: an identity-provider (Privy) token exchanged for a session (also set as cookies). */
  providerLogin(providerToken: string): Promise<c.SessionResponse> {
    return this.read(c.SessionResponse, 'POST', '/auth/privy', { what: 'provider sign-in', bearer: providerToken });
  }

  /** `POST /auth/verify`: the signed message for a session (also set as cookies). */
  verify(body: c.VerifyRequest): Promise<c.SessionResponse> {
    return this.read(c.SessionResponse, 'POST', '/auth/verify', { what: 'sign-in', body });
  }

  /** `POST /auth/refresh`: rotates the refresh token (from the cookie, or given). */
  refresh(refreshToken?: string): Promise<c.RefreshResponse> {
    return this.read(c.RefreshResponse, 'POST', '/auth/refresh', { what: 'session refresh', body: refreshToken ? { refreshToken } : {} });
  }

  /** `POST /auth/logout`: ends the caller's session. */
  logout(): Promise<c.Success> {
    return this.read(c.Success, 'POST', '/auth/logout', { what: 'sign-out', auth: true, body: {} });
  }

  // Spending wallets (consumer key, session)

  /** `POST /wallet/challenge`: a message for the wallet's key to sign, proving you hold it (see {@link c.WalletChallenge}). */
  walletChallenge(address: string): Promise<c.WalletChallenge> {
    return this.read(c.WalletChallenge, 'POST', '/wallet/challenge', { what: 'wallet challenge', auth: true, body: { address } });
  }

  /** `POST /wallet/generate`: registers an address (never a key), with a `proof` of holding it if given; it becomes the active wallet. */
  registerWallet(body: c.RegisterWallet): Promise<c.WalletView> {
    return this.read(c.WalletView, 'POST', '/wallet/generate', { what: 'wallet registration', auth: true, body, repeatable: true });
  }

  /**
   * `GET /wallet`: the active wallet with its live balance, or null.
   *
   * @example
   * const wallet = await registry.activeWallet(); // null when none is registered
   * if (wallet) console.log(wallet.address, wallet.balance);
   */
  activeWallet(signal?: AbortSignal): Promise<c.ActiveWallet | null> {
    return this.read(c.ActiveWalletOrNull, 'GET', '/wallet', { what: 'active wallet', auth: true, repeatable: true, signal });
  }

  /** `GET /wallet/all`: every wallet, revoked ones included. */
  wallets(signal?: AbortSignal): Promise<c.WalletView[]> {
    return this.read(c.WalletList, 'GET', '/wallet/all', { what: 'wallets', auth: true, repeatable: true, signal });
  }

  /** `GET /wallet/:address`: one of your wallets with its live balance. */
  wallet(address: string, signal?: AbortSignal): Promise<c.ActiveWallet> {
    return this.read(c.ActiveWallet, 'GET', `/wallet/${segment(address)}`, { what: 'wallet', auth: true, repeatable: true, signal });
  }

  /** `PATCH /wallet/:address`: null removes the label. */
  setWalletLabel(address: string, label: string | null): Promise<c.WalletView> {
    const body: c.UpdateLabel = { label };
    return this.read(c.WalletView, 'PATCH', `/wallet/${segment(address)}`, { what: 'wallet label', auth: true, body, repeatable: true });
  }

  /** `DELETE /wallet/:address`: revoked, still listed; funds on chain are untouched. */
  async revokeWallet(address: string): Promise<c.WalletView> {
    const answer = await this.read(c.RevokedWallet, 'DELETE', `/wallet/${segment(address)}`, { what: 'wallet revocation', auth: true });
    return answer.wallet;
  }

  // The exchange

  private async read<S extends TSchema>(schema: S, method: Method, path: string, options: SendOptions): Promise<Static<S>> {
    const answer = await this.send(method, path, options);
    return this.check(schema, answer, options.what, options.slug);
  }

  private check<S extends TSchema>(schema: S, answer: Answer, what: string, slug?: string): Static<S> {
    return readAnswer(schema, this.json(answer, what, slug), this.context(answer, what, slug));
  }

  private context(answer: Answer, what: string, slug?: string): AnswerContext {
    return { what, status: answer.status, body: answer.text, slug };
  }

  private json(answer: Answer, what: string, slug?: string): unknown {
    const parsed = parseJson(answer.text);
    if (!parsed.ok) {
      throw new MarketError('invalid_response', `The registry answered an invalid ${what}: not JSON (${excerpt(answer.text)})`, {
        status: answer.status,
        body: answer.text,
        slug,
      });
    }
    return parsed.value;
  }

  private cursor(answer: Answer): string | undefined {
    const cursor = answer.headers.get(c.NEXT_CURSOR_HEADER) ?? undefined;
    if (cursor !== undefined && (cursor === '' || cursor.length > MAX_CURSOR_LENGTH)) {
      throw new MarketError('invalid_response', 'The registry answered an invalid X-Next-Cursor header', { status: answer.status });
    }
    return cursor;
  }

  /** Sends one request (retrying it when it is repeatable) and answers the 2xx answer; anything else throws. */
  private async send(method: Method, path: string, options: SendOptions): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    else if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    else if (options.auth && !this.options.cookies) {
      throw new MarketError('credentials_required', `The ${options.what} needs apiKey (an API key or a session token)`, {
        slug: options.slug,
      });
    }
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    const url = `${this.base}${path}${queryString(options.query)}`;
    const attempts = options.repeatable ? this.attempts : 1;
    for (let attempt = 1; ; attempt++) {
      let error: RegistryError;
      try {
        const answer = await exchange(url, init, {
          fetch: this.fetch,
          timeoutMs: this.timeoutMs,
          retries: 0,
          signal: options.signal,
          what: options.what,
        });
        if (answer.status >= 200 && answer.status < 300) return answer;
        error = registryError(answer, options);
      } catch (thrown) {
        if (!(thrown instanceof NoAnswerError)) throw thrown;
        const where = this.base || 'this origin';
        error = new RegistryError('registry_error', `The registry at ${where} could not be reached (${thrown.message})`, {
          status: 0,
          cause: thrown,
          slug: options.slug,
        });
      }
      if (!error.retryable || attempt >= attempts) throw error;
      const backoff = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
      await sleep(Math.min(this.maxDelayMs, Math.max(backoff, error.retryAfterMs ?? 0)));
    }
  }
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A registry's error answer as the one error class: its text, code and request id kept. */
function registryError(answer: Answer, options: SendOptions): RegistryError {
  const parsed = parseJson(answer.text);
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  // Registries of the other SDK's kind put the text in `message`; ours in `error`.
  const text = [body.message, body.error].find((v): v is string => typeof v === 'string' && v.trim() !== '')?.slice(0, 300);
  const registryCode = typeof body.code === 'string' ? body.code.slice(0, 64) : undefined;
  const requestId = typeof body.requestId === 'string' ? body.requestId.slice(0, 128) : (answer.headers.get('x-request-id') ?? undefined);
  const notFound = answer.status === 404 && options.slug !== undefined && options.what.startsWith('skill');
  const message = notFound
    ? `No skill ${options.slug} in the registry`
    : `Registry ${options.what} failed with ${answer.status}${text ? `: ${text}` : ''}`;
  const wait = retryAfterMs(answer.headers.get('retry-after'));
  return new RegistryError(notFound ? 'skill_not_found' : 'registry_error', message, {
    status: answer.status,
    body: answer.text,
    ...(options.slug === undefined ? {} : { slug: options.slug }),
    ...(text === undefined ? {} : { error: text }),
    ...(registryCode === undefined ? {} : { registryCode }),
    ...(requestId === undefined ? {} : { requestId }),
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  });
}
