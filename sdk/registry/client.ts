/**
 * The one typed client of a registry: every endpoint the SDK, the CLI, the MCP server and the web
 * pages use, each a method that sends one route of the route table (see {@link RouteClient}),
 * its answer checked against the wire contract.
 */
import { MarketError } from '../http/errors';
import * as c from './contract/index';
import { REGISTRY_ROUTES as r } from './contract/index';
import { type RegisteredSkill, RegisteredSkillSchema, readSkill, readSkills, type Skill } from './read';
import { type Page, RouteClient } from './route-client';

export { DEFAULT_API_URL, type CallArgs, type CallOptions, type Page, type RegistryClientOptions, type RetryOptions } from './route-client';

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
export class RegistryClient extends RouteClient {
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
    const answer = await this.exchange(r.search, { query: { q: '', ...query } }, { what: 'search', signal });
    return { items: readSkills(this.json(answer, 'skill list'), this.context(answer, 'skill list')), nextCursor: this.cursor(answer) };
  }

  /** `GET /skills/:slug` (inactive ones too). @throws RegistryError('skill_not_found') on 404 */
  async skill(slug: string, signal?: AbortSignal): Promise<Skill> {
    const answer = await this.exchange(r.skill, { params: { slug } }, { what: `skill ${slug}`, slug, signal });
    const skill = readSkill(this.json(answer, 'skill', slug), this.context(answer, 'skill', slug));
    if (skill.slug !== slug) {
      throw new MarketError('invalid_response', `The registry answered skill ${skill.slug} for ${slug}`, { status: answer.status, slug });
    }
    return skill;
  }

  /** `GET /groups[?creator=]`. */
  groups(creator?: string, signal?: AbortSignal): Promise<c.GroupView[]> {
    return this.call(r.groups, { query: { creator } }, { what: 'groups', signal });
  }

  /** `GET /groups/:slug`: the group, its creator and its active skills. */
  group(slug: string, creator?: string, signal?: AbortSignal): Promise<c.GroupDetail> {
    return this.call(r.group, { params: { slug }, query: { creator } }, { what: `group ${slug}`, signal });
  }

  /** `GET /creators/:address`: a public profile with the creator's active skills. */
  creator(address: string, signal?: AbortSignal): Promise<c.CreatorWithSkills> {
    return this.call(r.creator, { params: { address } }, { what: 'creator', signal });
  }

  /** `GET /skills/:slug/reviews`: verified buyers' reviews, newest first. */
  reviews(slug: string, query: c.ReviewsQuery = {}, signal?: AbortSignal): Promise<Page<c.ReviewView>> {
    return this.page(r.reviews, { params: { slug }, query }, { what: 'reviews', slug, signal }, 'review list');
  }

  /** `GET /analytics/:skillId`: a skill's counters and daily series (`days`, default 30). */
  analytics(skillId: string, days?: number, signal?: AbortSignal): Promise<c.Analytics> {
    return this.call(r.analytics, { params: { skillId }, query: { days } }, { what: 'analytics', signal });
  }

  /** `POST /analytics/view`: a page view, counted once per visitor within the registry's window. */
  recordView(skillId: string): Promise<c.Recorded> {
    return this.call(r.recordView, { body: { skillId } }, { what: 'view' });
  }

  // A consumer's own (consumer key, session)

  /** `POST /analytics/favorite`. */
  favorite(skillId: string, add: boolean, slug?: string): Promise<c.FavoriteResult> {
    return this.call(r.favorite, { body: { skillId, action: add ? 'add' : 'remove' } }, { what: 'favorite', slug });
  }

  /** `GET /analytics/favorites`: favourite skills, most recent first. */
  async favorites(signal?: AbortSignal): Promise<Skill[]> {
    const answer = await this.exchange(r.favorites, {}, { what: 'favourites', signal });
    return readSkills(this.json(answer, 'skill list'), this.context(answer, 'skill list'));
  }

  /**
   * `POST /analytics/usage`: a paid call, counted once per payment reference. With consumer
   * credentials, `{skillId, amountAtomic, paymentRef}`; without, the payment itself
   * (`{skillSlug, consumerAddress, paymentTxHash, amount}`), believed once verified on chain.
   *
   * @example
   * await registry.recordUsage({ skillId: skill.id, amountAtomic: receipt.amount, paymentRef: receipt.transaction }); // '1000' = $0.001 in USDC
   */
  recordUsage(record: c.UsageBody | c.ReportedPayment, slug?: string): Promise<c.Recorded> {
    // A reported payment needs no credential.
    return this.call(r.recordUsage, { body: record }, { what: 'usage record', slug, credential: !('skillSlug' in record) });
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
  skillPayments(skillId: string, query: c.SkillPaymentsQuery = {}, signal?: AbortSignal): Promise<Page<c.SkillPaymentView>> {
    return this.page(r.skillPayments, { params: { skillId }, query }, { what: 'skill payments', signal }, 'skill payment list');
  }

  /**
   * `GET /analytics/usage`: the caller's paid calls, newest first.
   *
   * @example
   * const { items, nextCursor } = await registry.usage({ limit: 100 });
   * for (const record of items) console.log(record.skillSlug, record.amount, record.verification);
   */
  usage(query: c.UsageQuery = {}, signal?: AbortSignal): Promise<Page<c.UsageRecordView>> {
    return this.page(r.usage, { query }, { what: 'usage history', signal }, 'usage history');
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
    return this.call(r.channels, { query: { role } }, { what: 'channel list', signal });
  }

  /**
   * `POST /reviews`: review a skill you paid for; `created` is false when your review was updated.
   *
   * @example
   * const { created } = await registry.postReview({ skillSlug: 'word-count', score: 5, comment: 'Fast and exact' });
   */
  async postReview(review: c.PostReview): Promise<{ review: c.ReviewView; created: boolean }> {
    const answer = await this.exchange(r.postReview, { body: review }, { what: 'review', slug: review.skillSlug });
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
    const answer = await this.exchange(r.registerSkill, { body }, { what: `registration of ${body.name}` });
    // Registries of the other SDK's kind answer less than a full listing: `{slug}` is enough.
    return { skill: this.check(RegisteredSkillSchema, answer, 'skill'), created: answer.status === 201 };
  }

  /**
   * `PATCH /skills/:slug`: groups replace the whole set.
   *
   * @example
   * await registry.updateSkill('word-count', { price: '$0.002', isActive: true }); // the answer is the updated SkillView
   */
  updateSkill(slug: string, body: c.UpdateSkill): Promise<c.SkillView> {
    return this.call(r.updateSkill, { params: { slug }, body }, { what: `update of ${slug}`, slug });
  }

  /** `GET /creators/me/skills`: all the caller's skills, inactive ones included. */
  ownSkills(signal?: AbortSignal): Promise<c.SkillView[]> {
    return this.call(r.ownSkills, {}, { what: 'own skills', signal });
  }

  /** `POST /analytics/call`: one execution of the caller's skill, sent once (call tracking keeps its own schedule). */
  recordCall(body: c.CallBody): Promise<c.Recorded> {
    return this.call(r.recordCall, { body }, { what: 'call record' });
  }

  /**
   * `POST /analytics/calls`: up to {@link c.MAX_CALL_BATCH} executions of the caller's skills in one
   * request, sent once; one outcome per record, in order. A registry without the route answers 404.
   */
  recordCalls(calls: c.CallBody[]): Promise<c.CallsResult> {
    return this.call(r.recordCalls, { body: { calls } }, { what: 'call records' });
  }

  /** `POST /groups`: a new group of the caller's skills (a creator key). */
  createGroup(body: c.CreateGroup): Promise<c.GroupView> {
    return this.call(r.createGroup, { body }, { what: 'new group' });
  }

  /** `PATCH /groups/:slug`: the name, description or icon of one of the caller's groups. */
  updateGroup(slug: string, body: c.UpdateGroup): Promise<c.GroupView> {
    return this.call(r.updateGroup, { params: { slug }, body }, { what: `update of group ${slug}` });
  }

  /** `DELETE /groups/:slug` (409 while a skill uses it). */
  deleteGroup(slug: string): Promise<c.Success> {
    return this.call(r.deleteGroup, { params: { slug } }, { what: `deletion of group ${slug}` });
  }

  /** `POST /reviews/:id/reply`: the creator's one answer to a review of their skill. */
  replyToReview(id: string, comment: string): Promise<c.ReviewView> {
    return this.call(r.replyToReview, { params: { id }, body: { comment } }, { what: 'reply' });
  }

  // Account (session; the profile also with a key)

  /** `GET /creators/me`. */
  me(signal?: AbortSignal): Promise<c.Creator> {
    return this.call(r.me, {}, { what: 'profile', signal });
  }

  /** `PATCH /creators/me`: the caller's public profile. */
  updateProfile(body: c.ProfileUpdate): Promise<c.Creator> {
    return this.call(r.updateProfile, { body }, { what: 'profile update' });
  }

  /** `GET /auth/api-keys`: the caller's API keys, each by its prefix (never the key itself). */
  apiKeys(signal?: AbortSignal): Promise<c.ApiKeyView[]> {
    return this.call(r.apiKeys, {}, { what: 'API keys', signal });
  }

  /** `POST /auth/api-keys`: the full key is in this answer only. */
  createApiKey(body: c.CreateApiKeyRequest): Promise<c.CreatedApiKey> {
    return this.call(r.createApiKey, { body }, { what: 'new API key' });
  }

  /** `DELETE /auth/api-keys/:id`: revokes one of the caller's API keys. */
  revokeApiKey(id: string): Promise<c.Success> {
    return this.call(r.revokeApiKey, { params: { id } }, { what: 'API key revocation' });
  }

  /** `GET /webhooks`: the signed-in account's webhook endpoints (never their secrets). */
  webhooks(signal?: AbortSignal): Promise<c.WebhookView[]> {
    return this.call(r.webhooks, {}, { what: 'webhooks', signal });
  }

  /** `POST /webhooks`: the signing secret is in this answer only. */
  createWebhook(body: c.CreateWebhook): Promise<c.CreatedWebhook> {
    return this.call(r.createWebhook, { body }, { what: 'new webhook' });
  }

  /** `PATCH /webhooks/:id`: the URL, the events, or on/off. */
  updateWebhook(id: string, body: c.UpdateWebhook): Promise<c.WebhookView> {
    return this.call(r.updateWebhook, { params: { id }, body }, { what: 'webhook' });
  }

  /** `DELETE /webhooks/:id`. */
  deleteWebhook(id: string): Promise<c.Success> {
    return this.call(r.deleteWebhook, { params: { id } }, { what: 'webhook removal' });
  }

  /** `GET /webhooks/:id/deliveries`: the latest deliveries with their attempts. */
  webhookDeliveries(id: string, signal?: AbortSignal): Promise<c.WebhookDeliveryView[]> {
    return this.call(r.webhookDeliveries, { params: { id } }, { what: 'webhook deliveries', signal });
  }

  /** `POST /webhooks/:id/test`: queues a `webhook.test` event for this endpoint. */
  testWebhook(id: string): Promise<c.Success> {
    return this.call(r.testWebhook, { params: { id } }, { what: 'test event' });
  }

  /** `POST /webhooks/:id/deliveries/:deliveryId/retry`: sends a delivery again now. */
  redeliverWebhook(id: string, deliveryId: string): Promise<c.Success> {
    return this.call(r.redeliverWebhook, { params: { id, deliveryId } }, { what: 'redelivery' });
  }

  /** `POST /auth/challenge`: the EIP-4361 message to sign. */
  challenge(address: string): Promise<c.ChallengeResponse> {
    return this.call(r.challenge, { body: { address } }, { what: 'sign-in challenge' });
  }

  /** `POST /auth/privy`: an identity-provider (Privy) token exchanged for a session (also set as cookies). */
  providerLogin(providerToken: string): Promise<c.SessionResponse> {
    return this.call(r.providerLogin, {}, { what: 'provider sign-in', bearer: providerToken });
  }

  /** `POST /auth/verify`: the signed message for a session (also set as cookies). */
  verify(body: c.VerifyRequest): Promise<c.SessionResponse> {
    return this.call(r.verify, { body }, { what: 'sign-in' });
  }

  /** `POST /auth/refresh`: rotates the refresh token (from the cookie, or given). */
  refresh(refreshToken?: string): Promise<c.RefreshResponse> {
    return this.call(r.refresh, { body: refreshToken ? { refreshToken } : {} }, { what: 'session refresh' });
  }

  /** `POST /auth/logout`: ends the caller's session. */
  logout(): Promise<c.Success> {
    return this.call(r.logout, {}, { what: 'sign-out' });
  }

  // Spending wallets (consumer key, session)

  /** `POST /wallet/challenge`: a message for the wallet's key to sign, proving you hold it (see {@link c.WalletChallenge}). */
  walletChallenge(address: string): Promise<c.WalletChallenge> {
    return this.call(r.walletChallenge, { body: { address } }, { what: 'wallet challenge' });
  }

  /** `POST /wallet/generate`: registers an address (never a key), with a `proof` of holding it if given; it becomes the active wallet. */
  registerWallet(body: c.RegisterWallet): Promise<c.WalletView> {
    return this.call(r.registerWallet, { body }, { what: 'wallet registration' });
  }

  /**
   * `GET /wallet`: the active wallet with its live balance, or null.
   *
   * @example
   * const wallet = await registry.activeWallet(); // null when none is registered
   * if (wallet) console.log(wallet.address, wallet.balance);
   */
  activeWallet(signal?: AbortSignal): Promise<c.ActiveWallet | null> {
    return this.call(r.activeWallet, {}, { what: 'active wallet', signal });
  }

  /** `GET /wallet/all`: every wallet, revoked ones included. */
  wallets(signal?: AbortSignal): Promise<c.WalletView[]> {
    return this.call(r.wallets, {}, { what: 'wallets', signal });
  }

  /** `GET /wallet/:address`: one of your wallets with its live balance. */
  wallet(address: string, signal?: AbortSignal): Promise<c.ActiveWallet> {
    return this.call(r.wallet, { params: { address } }, { what: 'wallet', signal });
  }

  /** `PATCH /wallet/:address`: null removes the label. */
  setWalletLabel(address: string, label: string | null): Promise<c.WalletView> {
    return this.call(r.setWalletLabel, { params: { address }, body: { label } }, { what: 'wallet label' });
  }

  /** `DELETE /wallet/:address`: revoked, still listed; funds on chain are untouched. */
  async revokeWallet(address: string): Promise<c.WalletView> {
    return (await this.call(r.revokeWallet, { params: { address } }, { what: 'wallet revocation' })).wallet;
  }
}
