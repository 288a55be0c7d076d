/** Analytics: views, calls, usage, favourites, a skill's counters, and the caller's own history. */
import { type Static, Type as T } from '@sinclair/typebox';
import { Cursor, Nullable, PageLimit, QueryInteger, Timestamp, Uuid } from './common';

const SkillId = Uuid('the skill id (UUID)');
const PaymentRef = T.String({ minLength: 1, maxLength: 200, description: 'transaction hash or authorization nonce; counted once' });

export const ViewBody = T.Object({ skillId: SkillId });
export type ViewBody = Static<typeof ViewBody>;

/** `POST /analytics/call`: the skill's creator (its skill server) reports an execution. */
export const CallBody = T.Object({
  skillId: SkillId,
  amount: T.Optional(T.Union([T.String({ maxLength: 32 }), T.Number()], { description: 'USDC amount, e.g. "0.001"' })),
  paymentRef: T.Optional(PaymentRef),
});
export type CallBody = Static<typeof CallBody>;

/** Largest usage amount: $1,000,000 in micro-USDC. */
export const MAX_USAGE_AMOUNT = 1_000_000_000_000;

/** `POST /analytics/usage` with consumer credentials. */
export const UsageBody = T.Object({
  skillId: SkillId,
  // A JSON integer, or the same in decimal digits (how bigint amounts travel). A number with
  // multipleOf 1, not an integer schema, which Elysia coerces through Number() ("0x10" became 16).
  amount: T.Union([T.Number({ minimum: 1, maximum: MAX_USAGE_AMOUNT, multipleOf: 1 }), T.String({ pattern: '^[1-9][0-9]{0,12}$' })], {
    description: 'micro-USDC (1 = $0.000001), a positive integer up to 10^12, as a number or a decimal-digit string',
  }),
  paymentRef: T.Optional(PaymentRef),
});
export type UsageBody = Static<typeof UsageBody>;

/** The usage record other x402 SDKs post without a credential: believed only once verified on chain. */
export const ReportedPayment = T.Object({
  skillSlug: T.String({ minLength: 1, maxLength: 120 }),
  consumerAddress: T.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'the payer' }),
  paymentTxHash: T.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: 'the settlement transaction' }),
  amount: T.Union([T.String({ minLength: 1, maxLength: 32 }), T.Number()], {
    description: 'the listed price: "$0.001", "0.001", or integer micro-USDC (1000)',
  }),
});
export type ReportedPayment = Static<typeof ReportedPayment>;

/** `POST /analytics/usage`: ours with consumer credentials, or another SDK's report without. */
export const UsageRequest = T.Union([UsageBody, ReportedPayment]);

export const FavoriteBody = T.Object({ skillId: SkillId, action: T.Union([T.Literal('add'), T.Literal('remove')]) });
export type FavoriteBody = Static<typeof FavoriteBody>;
export const SkillIdParam = T.Object({ skillId: SkillId });
export const AnalyticsQuery = T.Object({
  days: T.Optional(QueryInteger(1, 90, 'length of the daily series, 1–90, default 30')),
});

export const Recorded = T.Object({ success: T.Literal(true), recorded: T.Boolean({ description: 'false when already counted' }) });
export type Recorded = Static<typeof Recorded>;
export const FavoriteResult = T.Object({ success: T.Literal(true), favorited: T.Boolean(), favoriteCount: T.Number() });
export type FavoriteResult = Static<typeof FavoriteResult>;

/** `GET /analytics/:skillId`: counters and a daily series. */
export const Analytics = T.Object({
  skillId: Uuid(),
  callCount: T.Number(),
  paidCallCount: T.Number({ description: 'calls whose payment is verified on chain' }),
  viewCount: T.Number(),
  favoriteCount: T.Number(),
  totalRevenue: T.String({ description: 'USDC, exact decimal' }),
  totalRevenueAtomic: T.String({ description: 'micro-USDC' }),
  lastCalledAt: Nullable(Timestamp()),
  lastViewedAt: Nullable(Timestamp()),
  daily: T.Array(
    T.Object({
      date: T.String({ description: 'UTC day, YYYY-MM-DD' }),
      views: T.Number(),
      calls: T.Number(),
      revenue: T.String({ description: 'USDC, exact decimal' }),
      revenueAtomic: T.String({ description: 'micro-USDC' }),
    }),
    { description: 'the last `days` days (today included), oldest first, empty days as zeros' },
  ),
});
export type Analytics = Static<typeof Analytics>;

/** `GET /analytics/usage`: the caller's paid calls, newest first. */
export const UsageQuery = T.Object({ limit: T.Optional(PageLimit('records per page, 1–100, default 20')), cursor: T.Optional(Cursor) });
export type UsageQuery = Static<typeof UsageQuery>;

export const VERIFICATION_STATES = ['none', 'pending', 'verified', 'rejected'] as const;
export const UsageRecordView = T.Object({
  id: Uuid(),
  skillId: Uuid(),
  skillSlug: T.String(),
  skillName: T.String(),
  amount: T.String({ description: 'USDC, exact decimal, e.g. "0.001"' }),
  amountAtomic: T.String({ description: 'micro-USDC, e.g. "1000"' }),
  paymentRef: Nullable(T.String(), 'transaction hash or authorization nonce, when one was recorded'),
  network: T.String({ description: 'CAIP-2 network of the skill, e.g. eip155:8453' }),
  verification: T.Union([T.Literal('none'), T.Literal('pending'), T.Literal('verified'), T.Literal('rejected')], {
    description: 'the payment’s on-chain check: none (no reference), pending, verified (counts as revenue) or rejected',
  }),
  createdAt: Timestamp(),
});
export type UsageRecordView = Static<typeof UsageRecordView>;
export const UsageRecordList = T.Array(UsageRecordView);
