/** Skills: registration, update, discovery and the listing every client reads. */
import { type Static, Type as T } from '@sinclair/typebox';
import { ADDRESS_PATTERN, Cursor, Nullable, PageLimit, Timestamp, Uuid } from './common';

/**
 * The pattern of a skill's `name` in {@link RegisterSkill} (`POST /skills`): a letter or digit, then
 * up to 63 letters, digits, `_` or `-`. The name is the path segment the skill is called at
 * (`POST <endpoint>/<name>`) and, with the caller, the key of the registration upsert.
 *
 * @example
 * new RegExp(SKILL_NAME_PATTERN).test('word-count'); // true
 * new RegExp(SKILL_NAME_PATTERN).test('word count'); // false: refused with 400
 */
export const SKILL_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
/**
 * The orders of `GET /skills` ({@link SearchQuery}'s `sort`): `relevance` (best full-text match;
 * needs `q`, and is the default with one), `popular` (most distinct paying wallets, a repeat buyer counting once more, weighed by the server's uptime, recent probe success and response time; then most verified paid calls), `newest` (the
 * default without `q`), `price` (cheapest first), `revenue` (most verified revenue) and `rating`
 * (best average review score; unreviewed skills last).
 *
 * @example
 * await registry.search({ q: 'translate', sort: 'price' }); // cheapest first; any of SORTS
 */
export const SORTS = ['relevance', 'popular', 'newest', 'price', 'revenue', 'rating'] as const;
/** One of {@link SORTS}: the `sort` of a {@link SearchQuery}. */
export type Sort = (typeof SORTS)[number];
/**
 * The `status` filter of `GET /skills` ({@link SearchQuery}), by the skill server's last health
 * probe: `up`, `down` or `unknown` (never answered one) keep those skills only; `any` keeps all.
 * Without it, every skill is kept except those whose server has been down for long.
 *
 * @example
 * await registry.search({ group: 'text', status: 'up' }); // only skills whose server answered the last probe
 */
export const HEALTH_FILTERS = ['up', 'down', 'unknown', 'any'] as const;
/** One of {@link HEALTH_FILTERS}: the `status` of a {@link SearchQuery}. */
export type HealthFilter = (typeof HEALTH_FILTERS)[number];

const Price = T.Union([T.String({ minLength: 1, maxLength: 32 }), T.Number()], { description: '"$0.001", "0.001" or 0.001 (USDC)' });
// Unknown, not a record: Elysia coerces a string into a record ("-1" became {"0":"-","1":"1"}).
// The registry checks it is a JSON object and a valid JSON Schema.
const Schema = T.Unknown({ description: 'a JSON Schema object, or null' });
const GroupNames = T.Array(T.String({ minLength: 1, maxLength: 60 }), {
  minItems: 1,
  maxItems: 20,
  description: 'names (or slugs) of your groups',
});

const Period = T.Union([T.Literal('day'), T.Literal('week'), T.Literal('month')], { description: 'a UTC calendar period' });
/**
 * A skill's free trial: `calls` free calls per payer wallet per `period` (the skill server counts
 * them; a payer proves its wallet with the 402's x402 `sign-in-with-x`).
 *
 * @example
 * const trial: TrialTerms = { calls: 3, period: 'day' }; // RegisterSkill.trial, SkillView.trial
 */
export const TrialTerms = T.Object({
  calls: T.Integer({ minimum: 1, maximum: 1000, description: 'free calls per payer wallet per period' }),
  period: Period,
});
/** The {@link TrialTerms} schema's type. */
export type TrialTerms = Static<typeof TrialTerms>;
const TierStep = T.Object({
  after: T.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    description: 'paid calls of one payer in the period after which this price applies',
  }),
  price: Price,
});
/**
 * Volume prices: after `after` paid calls of one payer in `period`, each call costs `price` (lower
 * than the skill's price; steps by growing `after` and falling price).
 *
 * @example
 * const tiers: VolumeTiers = { period: 'month', steps: [{ after: 1000, price: '$0.0008' }] }; // RegisterSkill.tiers
 */
export const VolumeTiers = T.Object({
  period: Period,
  steps: T.Array(TierStep, { minItems: 1, maxItems: 10 }),
});
/** The {@link VolumeTiers} schema's type. */
export type VolumeTiers = Static<typeof VolumeTiers>;

const USAGE_BASED = 'the price is the most a call costs, charged by use; false: a flat price';

/** Why a description is at most 500 characters. */
const DESCRIPTION_LIMIT =
  'at most 500 characters: CDP’s facilitator refuses a longer resource.description, so the Bazaar would never index the skill';

/**
 * `POST /skills` body (creator credentials: an `sk_` key or a session): registers a skill, or
 * updates the caller's skill of the same `name` (an upsert): answered 201 created or 200 updated,
 * with the {@link SkillView} and its assigned `slug`.
 *
 * - `name`: {@link SKILL_NAME_PATTERN}; the path segment the skill is called at.
 * - `endpoint`: the skill server's base URL (`/<name>` is appended) or the full call URL ending in
 *   `/<name>`; absolute http(s), https unless the registry allows http.
 * - `price`: USDC per call as `"$0.001"`, `"0.001"` or `0.001`; more than 0, at most 6 decimals.
 * - `paymentAddress`: the 0x address paid (the 402 `payTo`); a mixed-case one needs a valid
 *   EIP-55 checksum.
 * - `groups`: 1–20 names or slugs of the caller's existing groups (an unknown one gives 400).
 * - `inputSchema`, `outputSchema`: JSON Schema objects, or null; `description` at most 500
 *   characters (CDP's facilitator refuses a longer `resource.description`); `category` at most 40; `network` a CAIP-2 id, default `eip155:8453` (Base).
 * - `usageBased`: `price` is the most a call costs (the SDK sends `skill({ upto })`); omitted: kept.
 *
 * @example
 * import { type RegisterSkill, RegistryClient } from 'skill-market/registry';
 *
 * const body: RegisterSkill = {
 *   name: 'weather-now',
 *   endpoint: 'https://skills.example.com',
 *   price: '$0.001',
 *   paymentAddress: '0x2546BcD3c84621e976D8185a91A922aE77ECEc30',
 *   description: 'Current weather for a city',
 *   inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
 *   groups: ['weather'],
 * };
 * const registry = new RegistryClient({ apiUrl: 'https://registry.example.com', apiKey: process.env.MARKET_API_KEY });
 * const { skill, created } = await registry.registerSkill(body);
 * console.log(created ? 'registered' : 'updated', skill.slug);
 */
export const RegisterSkill = T.Object({
  name: T.String({ pattern: SKILL_NAME_PATTERN, description: 'letters, digits, _ and -; at most 64; becomes the URL path segment' }),
  endpoint: T.String({ minLength: 1, maxLength: 2048, description: 'the skill server base URL, or the full call URL ending in /<name>' }),
  price: Price,
  paymentAddress: T.String({ description: '0x address that receives payments' }),
  receiptSigner: T.Optional(
    T.String({ description: '0x address of the key the skill server signs its answers’ receipts with; omitted: the listed one is kept' }),
  ),
  description: T.Optional(
    T.String({ maxLength: 500, description: DESCRIPTION_LIMIT, error: `Invalid request: field "description": ${DESCRIPTION_LIMIT}` }),
  ),
  inputSchema: T.Optional(Schema),
  outputSchema: T.Optional(Schema),
  groups: GroupNames,
  network: T.Optional(T.String({ pattern: '^eip155:[0-9]{1,12}$', description: 'CAIP-2 payment network, default eip155:8453' })),
  category: T.Optional(T.String({ minLength: 1, maxLength: 40 })),
  trial: T.Optional(Nullable(TrialTerms)),
  tiers: T.Optional(Nullable(VolumeTiers)),
  usageBased: T.Optional(T.Boolean({ description: `${USAGE_BASED}; omitted: kept` })),
});
/** The {@link RegisterSkill} schema's type. */
export type RegisterSkill = Static<typeof RegisterSkill>;

/**
 * `PATCH /skills/:slug` body (the skill's creator): any of the fields; one left out is kept. `groups`
 * replaces the whole set (1–20 of the caller's groups); `null` clears `description`, `category`
 * or a schema; `isActive: false` hides the skill from discovery (its detail stays readable).
 * `price` is USDC as in {@link RegisterSkill}. `trial` and `tiers` set the free trial and the
 * volume prices (checked as at registration; each step's price below the price before it), `null`
 * removes them. An edited price, trial or tiers is kept over the module's on re-registration, and a
 * running skill server follows it within its listing refresh. A registration sending `usageBased`
 * replaces it. Answered with the {@link SkillView}.
 */
export const UpdateSkill = T.Object({
  description: T.Optional(
    Nullable(
      T.String({ maxLength: 500, description: DESCRIPTION_LIMIT, error: `Invalid request: field "description": ${DESCRIPTION_LIMIT}` }),
    ),
  ),
  price: T.Optional(Price),
  groups: T.Optional(GroupNames),
  inputSchema: T.Optional(Schema),
  outputSchema: T.Optional(Schema),
  isActive: T.Optional(T.Boolean()),
  category: T.Optional(Nullable(T.String({ minLength: 1, maxLength: 40 }))),
  trial: T.Optional(Nullable(TrialTerms)),
  tiers: T.Optional(Nullable(VolumeTiers)),
  usageBased: T.Optional(T.Boolean({ description: USAGE_BASED })),
});
/** The {@link UpdateSkill} schema's type. */
export type UpdateSkill = Static<typeof UpdateSkill>;

/**
 * A skill as the registry answers it: `GET /skills/:slug`, the items of `GET /skills`,
 * `GET /creators/:address`, `GET /groups/:slug`, `GET /creators/me/skills` and
 * `GET /analytics/favorites`, and the answer of `POST /skills` and `PATCH /skills/:slug`.
 *
 * - Money: `price` (`"$0.001"`) and `priceUsdc` (`"0.001"`) are for people; `priceAtomic` is the
 *   exact integer micro-USDC (1 = $0.000001) to pay per call, to `paymentAddress` on `network`.
 *   It is the listing's price: a payment in a token of other decimals is that price in the token's
 *   atomic units; with `usageBased`, the most a call costs. Revenue is the sum of payments verified on chain: `totalRevenue` in whole tokens,
 *   `totalRevenueAtomic` in the token's atomic units (use it for sums). All are strings, never floats.
 * - Calling: `POST` the input as JSON to `endpoint` (the full call URL); unpaid, it answers 402.
 * - Counters: `paidCallCount` counts calls whose payment is verified on chain, `callCount` adds the
 *   unpaid calls the creator reported; `buyerCount` counts the distinct wallets behind the paid
 *   calls and `repeatBuyerCount` those that paid more than once (one wallet's volume is one buyer).
 * - Null means none: `description`, `category`, `inputSchema`, `outputSchema`; `rating` (average
 *   score 1–5) before any review; `latencyMs` and `lastUpAt` before the server answered a probe;
 *   `uptime` and `recentSuccessRate` before a probe.
 * - `status` is the server's last health probe (`unknown` until one answers); `uptime` the share
 *   of the last week it answered, `recentSuccessRate` the share of its recent probes; `verified` is the
 *   registry operator's mark; a skill with `isActive: false` is left out of discovery (search,
 *   groups, creator profiles) but still answered by slug.
 *
 * @example
 * import { RegistryClient, type SkillView } from 'skill-market/registry';
 *
 * const registry = new RegistryClient({ apiUrl: 'https://registry.example.com', apiKey: process.env.MARKET_API_KEY });
 * const mine: SkillView[] = await registry.ownSkills();
 * for (const skill of mine) {
 *   const rating = skill.rating === null ? 'no reviews' : `${skill.rating.toFixed(1)}/5 (${skill.reviewCount})`;
 *   console.log(`${skill.slug} ${skill.price} per call, ${skill.paidCallCount} paid calls, $${skill.totalRevenue}, ${rating}`);
 * }
 * console.log('earned in all (atomic units):', mine.reduce((sum, skill) => sum + BigInt(skill.totalRevenueAtomic), 0n));
 */
export const SkillView = T.Object({
  id: Uuid(),
  slug: T.String({ minLength: 1, maxLength: 200 }),
  name: T.String({ minLength: 1, maxLength: 200 }),
  description: Nullable(T.String()),
  price: T.String({ minLength: 1, maxLength: 64, description: 'dollar-prefixed USDC, e.g. "$0.001"' }),
  priceUsdc: T.String({ description: 'plain decimal USDC, e.g. "0.001"' }),
  priceAtomic: T.String({ pattern: '^[1-9][0-9]{0,20}$', description: 'integer micro-USDC' }),
  currency: T.Literal('USDC'),
  usageBased: T.Boolean({ description: USAGE_BASED }),
  trial: Nullable(TrialTerms, 'free calls per payer wallet per period; null without a trial'),
  tiers: Nullable(
    T.Object({
      period: Period,
      steps: T.Array(
        T.Object({
          after: T.Integer({ minimum: 1 }),
          price: T.String({ description: 'dollar-prefixed USDC, e.g. "$0.0008"' }),
          priceAtomic: T.String({ pattern: '^[1-9][0-9]{0,20}$', description: 'integer micro-USDC' }),
        }),
      ),
    }),
    'volume prices: after `after` paid calls of one payer in the period, `price`; null without',
  ),
  network: T.String({ pattern: '^eip155:[1-9][0-9]{0,15}$', description: 'CAIP-2 payment network' }),
  endpoint: T.String({ minLength: 1, maxLength: 2048, description: 'the full call URL: POST here' }),
  paymentAddress: T.String({ pattern: ADDRESS_PATTERN, description: 'who receives payments: the 402 payTo' }),
  receiptSigner: Nullable(
    T.String({ pattern: ADDRESS_PATTERN }),
    'address that signs the skill server’s receipts (X-Receipt) on paid answers; null: it signs none',
  ),
  inputSchema: Nullable(T.Record(T.String(), T.Unknown())),
  outputSchema: Nullable(T.Record(T.String(), T.Unknown())),
  category: Nullable(T.String()),
  groups: T.Array(T.String()),
  isActive: T.Boolean(),
  verified: T.Boolean(),
  creatorId: Uuid(),
  creatorAddress: T.String(),
  callCount: T.Number({ description: 'verified paid calls plus unpaid calls the creator reported' }),
  paidCallCount: T.Number({ description: 'calls whose payment is verified on chain (one per transaction)' }),
  trialCallCount: T.Number({ description: 'free trial calls the creator reported: no revenue, not in callCount or paidCallCount' }),
  buyerCount: T.Number({ description: 'distinct wallets with a paid call verified on chain' }),
  repeatBuyerCount: T.Number({ description: 'of those, the wallets that paid more than once' }),
  viewCount: T.Number(),
  favoriteCount: T.Number(),
  rating: Nullable(T.Number(), 'average review score of verified buyers in stars, 0–5 (the 0–100 average / 20); null without reviews'),
  reviewCount: T.Number(),
  totalRevenueAtomic: T.String({ description: 'the token’s atomic units (micro-USDC for USDC), exact integer (for sums)' }),
  totalRevenue: T.String({ description: 'whole tokens (USDC), exact decimal: the sum of payments verified on chain' }),
  status: T.Union([T.Literal('up'), T.Literal('down'), T.Literal('unknown')], {
    description: 'the skill server’s last health probe; unknown until one answers',
  }),
  latencyMs: Nullable(T.Number(), 'response time of the last successful probe'),
  lastUpAt: Nullable(Timestamp(), 'when the server last answered a probe'),
  uptime: Nullable(
    T.Number({ minimum: 0, maximum: 1 }),
    'share of the last week the server answered its health probes (time-weighted), 0–1; null before a probe',
  ),
  recentSuccessRate: Nullable(T.Number({ minimum: 0, maximum: 1 }), 'share of the recent health probes answered, 0–1; null before a probe'),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
/** The {@link SkillView} schema's type. */
export type SkillView = Static<typeof SkillView>;

/**
 * A listing's price for people: `"up to $0.01"` when `usageBased`, else `"$0.01"`.
 *
 * @example console.log(`${skill.slug} ${priceLabel(skill)} a call`);
 */
export const priceLabel = (skill: Pick<SkillView, 'price'> & { usageBased?: boolean | undefined }): string =>
  skill.usageBased ? `up to ${skill.price}` : skill.price;
/**
 * A list of {@link SkillView}: the answer of `GET /skills` (one page; the next page's cursor is in
 * the `X-Next-Cursor` header), `GET /creators/me/skills` and `GET /analytics/favorites`.
 */
export const SkillList = T.Array(SkillView);

/**
 * Query of `GET /skills` (public): active skills matching every filter given, one page at a time.
 *
 * - `q`: full-text search over name and description; every word matches as a prefix.
 * - `minPrice`, `maxPrice`: USDC per call, inclusive, as `"0.01"` or `"$0.01"` (not micro-USDC).
 * - `creator`: the creator's 0x wallet address; `group`: a group's slug or name; `category`:
 *   exact; `verified`: `"true"` or `"false"`.
 * - `sort`: one of {@link SORTS}; `status`: one of {@link HEALTH_FILTERS}.
 * - `limit`: 1–100, default 20; `cursor`: the `X-Next-Cursor` header of the previous page, sent
 *   with the same other parameters.
 *
 * @example
 * import { RegistryClient, type SearchQuery, type SkillView } from 'skill-market/registry';
 *
 * const query: SearchQuery = { q: 'weather forecast', maxPrice: '0.01', group: 'weather', sort: 'popular', limit: 50 };
 * const registry = new RegistryClient({ apiUrl: 'https://registry.example.com' });
 * const found: Pick<SkillView, 'slug' | 'price'>[] = [];
 * let page = await registry.search(query);
 * found.push(...page.items);
 * while (page.nextCursor) {
 *   page = await registry.search({ ...query, cursor: page.nextCursor });
 *   found.push(...page.items);
 * }
 */
export const SearchQuery = T.Object({
  q: T.Optional(T.String({ maxLength: 200 })),
  category: T.Optional(T.String({ maxLength: 40 })),
  minPrice: T.Optional(T.String({ maxLength: 32 })),
  maxPrice: T.Optional(T.String({ maxLength: 32 })),
  creator: T.Optional(T.String({ maxLength: 42 })),
  verified: T.Optional(T.String({ maxLength: 5 })),
  group: T.Optional(T.String({ maxLength: 80 })),
  limit: T.Optional(PageLimit('skills per page, 1–100, default 20')),
  cursor: T.Optional(Cursor),
  sort: T.Optional(T.Union(SORTS.map((s) => T.Literal(s)))),
  status: T.Optional(
    T.Union(
      HEALTH_FILTERS.map((s) => T.Literal(s)),
      { description: 'server health; default: all but skills down for long' },
    ),
  ),
});
/** The {@link SearchQuery} schema's type. */
export type SearchQuery = Static<typeof SearchQuery>;
