/** Skills: registration, update, discovery and the listing every client reads. */
import { type Static, Type as T } from '@sinclair/typebox';
import { ADDRESS_PATTERN, Cursor, Nullable, PageLimit, Timestamp, Uuid } from './common';

export const SKILL_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
export const SORTS = ['relevance', 'popular', 'newest', 'price', 'revenue', 'rating'] as const;
export type Sort = (typeof SORTS)[number];
/** `status` of discovery: a server's last health probe; `any` keeps all. */
export const HEALTH_FILTERS = ['up', 'down', 'unknown', 'any'] as const;
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

/** `POST /skills`: register, or update yours of the same name (201 created, 200 updated). */
export const RegisterSkill = T.Object({
  name: T.String({ pattern: SKILL_NAME_PATTERN, description: 'letters, digits, _ and -; at most 64; becomes the URL path segment' }),
  endpoint: T.String({ minLength: 1, maxLength: 2048, description: 'the skill server base URL, or the full call URL ending in /<name>' }),
  price: Price,
  paymentAddress: T.String({ description: '0x address that receives payments' }),
  description: T.Optional(T.String({ maxLength: 2000 })),
  inputSchema: T.Optional(Schema),
  outputSchema: T.Optional(Schema),
  groups: GroupNames,
  network: T.Optional(T.String({ pattern: '^eip155:[0-9]{1,12}$', description: 'CAIP-2 payment network, default eip155:8453' })),
  category: T.Optional(T.String({ minLength: 1, maxLength: 40 })),
});
export type RegisterSkill = Static<typeof RegisterSkill>;

/** `PATCH /skills/:slug`: groups replace the whole set. */
export const UpdateSkill = T.Object({
  description: T.Optional(Nullable(T.String({ maxLength: 2000 }))),
  price: T.Optional(Price),
  groups: T.Optional(GroupNames),
  inputSchema: T.Optional(Schema),
  outputSchema: T.Optional(Schema),
  isActive: T.Optional(T.Boolean()),
  category: T.Optional(Nullable(T.String({ minLength: 1, maxLength: 40 }))),
});
export type UpdateSkill = Static<typeof UpdateSkill>;

/** A skill as the registry lists it: `GET /skills/:slug`, search results, a creator's skills. */
export const SkillView = T.Object({
  id: Uuid(),
  slug: T.String({ minLength: 1, maxLength: 200 }),
  name: T.String({ minLength: 1, maxLength: 200 }),
  description: Nullable(T.String()),
  price: T.String({ minLength: 1, maxLength: 64, description: 'dollar-prefixed USDC, e.g. "$0.001"' }),
  priceUsdc: T.String({ description: 'plain decimal USDC, e.g. "0.001"' }),
  priceAtomic: T.String({ pattern: '^[1-9][0-9]{0,20}$', description: 'integer micro-USDC' }),
  currency: T.Literal('USDC'),
  network: T.String({ pattern: '^eip155:[1-9][0-9]{0,15}$', description: 'CAIP-2 payment network' }),
  endpoint: T.String({ minLength: 1, maxLength: 2048, description: 'the full call URL: POST here' }),
  paymentAddress: T.String({ pattern: ADDRESS_PATTERN, description: 'who receives payments: the 402 payTo' }),
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
  viewCount: T.Number(),
  favoriteCount: T.Number(),
  rating: Nullable(T.Number(), 'average review score (1–5) of verified buyers; null without reviews'),
  reviewCount: T.Number(),
  totalRevenueAtomic: T.String({ description: 'micro-USDC, exact integer (for sums across skills)' }),
  totalRevenue: T.String({ description: 'USDC, exact decimal: the sum of payments verified on chain' }),
  status: T.Union([T.Literal('up'), T.Literal('down'), T.Literal('unknown')], {
    description: 'the skill server’s last health probe; unknown until one answers',
  }),
  latencyMs: Nullable(T.Number(), 'response time of the last successful probe'),
  lastUpAt: Nullable(Timestamp(), 'when the server last answered a probe'),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
export type SkillView = Static<typeof SkillView>;
export const SkillList = T.Array(SkillView);

/** `GET /skills`: full-text search and filters; the next page's cursor is in X-Next-Cursor. */
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
export type SearchQuery = Static<typeof SearchQuery>;
