import { t, type Static } from 'elysia';
import { HEALTH_FILTERS } from '../skill-health/filters';

export const SKILL_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';

const Price = t.Union([t.String({ minLength: 1, maxLength: 32 }), t.Number()], { description: '"$0.001", "0.001" or 0.001 (USDC)' });
// Unknown, not t.Record: Elysia coerces a string into a record ("-1" became {"0":"-","1":"1"}).
// The service checks it is a JSON object and a valid JSON Schema (schemaOf).
const Schema = t.Unknown({ description: 'a JSON Schema object, or null' });
const GroupNames = t.Array(t.String({ minLength: 1, maxLength: 60 }), {
  minItems: 1,
  maxItems: 20,
  description: 'names (or slugs) of your groups',
});

export const RegisterSkill = t.Object({
  name: t.String({ pattern: SKILL_NAME_PATTERN, description: 'letters, digits, _ and -; at most 64; becomes the URL path segment' }),
  endpoint: t.String({ minLength: 1, maxLength: 2048, description: 'the skill server base URL, or the full call URL ending in /<name>' }),
  price: Price,
  paymentAddress: t.String({ description: '0x address that receives payments' }),
  description: t.Optional(t.String({ maxLength: 2000 })),
  inputSchema: t.Optional(Schema),
  outputSchema: t.Optional(Schema),
  groups: GroupNames,
  network: t.Optional(t.String({ pattern: '^eip155:[0-9]{1,12}$', description: 'CAIP-2 payment network, default eip155:8453' })),
  category: t.Optional(t.String({ minLength: 1, maxLength: 40 })),
});
export type RegisterSkill = Static<typeof RegisterSkill>;

export const UpdateSkill = t.Object({
  description: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
  price: t.Optional(Price),
  groups: t.Optional(GroupNames),
  inputSchema: t.Optional(Schema),
  outputSchema: t.Optional(Schema),
  isActive: t.Optional(t.Boolean()),
  category: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 40 }), t.Null()])),
});
export type UpdateSkill = Static<typeof UpdateSkill>;

export const SkillView = t.Object({
  id: t.String({ format: 'uuid' }),
  slug: t.String(),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  price: t.String({ description: 'dollar-prefixed USDC, e.g. "$0.001"' }),
  priceUsdc: t.String({ description: 'plain decimal USDC, e.g. "0.001"' }),
  priceAtomic: t.String({ description: 'integer micro-USDC' }),
  currency: t.Literal('USDC'),
  network: t.String(),
  endpoint: t.String({ description: 'the full call URL: POST here' }),
  paymentAddress: t.String(),
  inputSchema: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
  outputSchema: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
  category: t.Union([t.String(), t.Null()]),
  groups: t.Array(t.String()),
  isActive: t.Boolean(),
  verified: t.Boolean(),
  creatorId: t.String({ format: 'uuid' }),
  creatorAddress: t.String(),
  callCount: t.Number({ description: 'verified paid calls plus unpaid calls the creator reported' }),
  paidCallCount: t.Number({ description: 'calls whose payment is verified on chain (one per transaction)' }),
  viewCount: t.Number(),
  favoriteCount: t.Number(),
  rating: t.Union([t.Number(), t.Null()], { description: 'average review score (1–5) of verified buyers; null without reviews' }),
  reviewCount: t.Number(),
  totalRevenueAtomic: t.String({ description: 'micro-USDC, exact integer (for sums across skills)' }),
  totalRevenue: t.String({ description: 'USDC, exact decimal: the sum of payments verified on chain' }),
  status: t.Union([t.Literal('up'), t.Literal('down'), t.Literal('unknown')], {
    description: 'the skill server’s last health probe; unknown until one answers',
  }),
  latencyMs: t.Union([t.Number(), t.Null()], { description: 'response time of the last successful probe' }),
  lastUpAt: t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'when the server last answered a probe' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
});
export type SkillView = Static<typeof SkillView>;

export const SORTS = ['relevance', 'popular', 'newest', 'price', 'revenue', 'rating'] as const;
export type Sort = (typeof SORTS)[number];

export const SearchQuery = t.Object({
  q: t.Optional(t.String({ maxLength: 200 })),
  category: t.Optional(t.String({ maxLength: 40 })),
  minPrice: t.Optional(t.String({ maxLength: 32 })),
  maxPrice: t.Optional(t.String({ maxLength: 32 })),
  creator: t.Optional(t.String({ maxLength: 42 })),
  verified: t.Optional(t.String({ maxLength: 5 })),
  group: t.Optional(t.String({ maxLength: 80 })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
  cursor: t.Optional(t.String({ maxLength: 512 })),
  sort: t.Optional(t.Union(SORTS.map((s) => t.Literal(s)))),
  status: t.Optional(
    t.Union(
      HEALTH_FILTERS.map((s) => t.Literal(s)),
      { description: 'server health; default: all but skills down for long' },
    ),
  ),
});
export type SearchQuery = Static<typeof SearchQuery>;

export const SlugParam = t.Object({ slug: t.String({ minLength: 1, maxLength: 120 }) });
