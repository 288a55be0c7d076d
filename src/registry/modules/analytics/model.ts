import { t } from 'elysia';

const SkillId = t.String({ format: 'uuid', description: 'the skill id (UUID)' });
const PaymentRef = t.String({ minLength: 1, maxLength: 200, description: 'transaction hash or authorization nonce; counted once' });

export const ViewBody = t.Object({ skillId: SkillId });
export const CallBody = t.Object({
  skillId: SkillId,
  amount: t.Optional(t.Union([t.String({ maxLength: 32 }), t.Number()], { description: 'USDC amount, e.g. "0.001"' })),
  paymentRef: t.Optional(PaymentRef),
});
/** Largest usage amount: $1,000,000 in micro-USDC. */
export const MAX_USAGE_AMOUNT = 1_000_000_000_000;

export const UsageBody = t.Object({
  skillId: SkillId,
  // A JSON integer, or the same in decimal digits (how bigint amounts travel). t.Number, not
  // Elysia's t.Integer, which coerces any string through Number() and so took "0x10" as 16.
  amount: t.Union([t.Number({ minimum: 1, maximum: MAX_USAGE_AMOUNT, multipleOf: 1 }), t.String({ pattern: '^[1-9][0-9]{0,12}$' })], {
    description: 'micro-USDC (1 = $0.000001), a positive integer up to 10^12, as a number or a decimal-digit string',
  }),
  paymentRef: t.Optional(PaymentRef),
});
export const FavoriteBody = t.Object({ skillId: SkillId, action: t.Union([t.Literal('add'), t.Literal('remove')]) });
export const SkillIdParam = t.Object({ skillId: SkillId });
export const AnalyticsQuery = t.Object({
  days: t.Optional(t.Numeric({ minimum: 1, maximum: 90, multipleOf: 1, description: 'length of the daily series, 1–90, default 30' })),
});

export const Recorded = t.Object({ success: t.Literal(true), recorded: t.Boolean({ description: 'false when already counted' }) });
export const FavoriteResult = t.Object({ success: t.Literal(true), favorited: t.Boolean(), favoriteCount: t.Number() });

export const Analytics = t.Object({
  skillId: t.String({ format: 'uuid' }),
  callCount: t.Number(),
  paidCallCount: t.Number({ description: 'calls whose payment is verified on chain' }),
  viewCount: t.Number(),
  favoriteCount: t.Number(),
  totalRevenue: t.String({ description: 'USDC, exact decimal' }),
  totalRevenueAtomic: t.String({ description: 'micro-USDC' }),
  lastCalledAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  lastViewedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  daily: t.Array(
    t.Object({
      date: t.String({ description: 'UTC day, YYYY-MM-DD' }),
      views: t.Number(),
      calls: t.Number(),
      revenue: t.String({ description: 'USDC, exact decimal' }),
      revenueAtomic: t.String({ description: 'micro-USDC' }),
    }),
    { description: 'the last `days` days (today included), oldest first, empty days as zeros' },
  ),
});
