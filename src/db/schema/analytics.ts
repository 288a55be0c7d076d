import { bigint, date, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { atomicAmount } from './amounts';
import { skills } from './catalogue';
import { paymentVerifications } from './payment-verifications';
import { users } from './users';

/** Running counters per skill, updated atomically with each record (no lost updates). */
export const skillStats = pgTable(
  'skill_stats',
  {
    skillId: uuid('skill_id')
      .primaryKey()
      .references(() => skills.id, { onDelete: 'cascade' }),
    viewCount: integer('view_count').notNull().default(0),
    /** Calls: unpaid ones reported by the creator without a payment reference, plus verified paid calls. */
    callCount: integer('call_count').notNull().default(0),
    /** Verified payments only (one per transaction); what `sort=popular` ranks by. */
    paidCallCount: integer('paid_call_count').notNull().default(0),
    /** Free trial calls reported by the skill server: apart from calls, paid calls and revenue. */
    trialCallCount: integer('trial_call_count').notNull().default(0),
    favoriteCount: integer('favorite_count').notNull().default(0),
    /** Sum of verified payments, in the atomic units of the token the skill is paid in. */
    totalRevenue: atomicAmount('total_revenue').notNull().default(sql`0`),
    /** Reviews by verified buyers: their number and the sum of their scores (the average is exact). */
    reviewCount: integer('review_count').notNull().default(0),
    ratingSum: integer('rating_sum').notNull().default(0),
    lastCalledAt: timestamp('last_called_at', { withTimezone: true }),
    lastViewedAt: timestamp('last_viewed_at', { withTimezone: true }),
    /** Distinct wallets with a verified paid call (skill_buyers): washing from one wallet buys one. */
    buyerCount: integer('buyer_count').notNull().default(0),
    /** Of those, the wallets that paid more than once. */
    repeatBuyerCount: integer('repeat_buyer_count').notNull().default(0),
    /**
     * How well the skill's server serves, per mille (skill-health's `serviceQuality`: uptime, recent
     * probe success and latency); 500 until its server was probed.
     */
    serviceQuality: integer('service_quality').notNull().default(500),
    /**
     * What `sort=popular` ranks by: buyers, a repeat buyer counting once more, weighed by the
     * service quality; then paid calls (capped at 2^19 - 1) among equals.
     */
    popularity: bigint('popularity', { mode: 'bigint' })
      .notNull()
      .generatedAlwaysAs(sql`((2 * buyer_count::bigint + repeat_buyer_count) * service_quality) * 524288 + least(paid_call_count, 524287)`),
  },
  (t) => [
    index('skill_stats_calls_idx').on(t.callCount),
    index('skill_stats_popularity_idx').on(t.popularity),
    index('skill_stats_paid_calls_idx').on(t.paidCallCount),
    index('skill_stats_revenue_idx').on(t.totalRevenue),
  ],
);

/** Per-day series for charts. */
export const skillDaily = pgTable(
  'skill_daily',
  {
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    day: date('day', { mode: 'string' }).notNull(),
    views: integer('views').notNull().default(0),
    calls: integer('calls').notNull().default(0),
    revenue: atomicAmount('revenue').notNull().default(sql`0`),
  },
  (t) => [primaryKey({ columns: [t.skillId, t.day] })],
);

/** The last counted view per skill and client (IP hashed): one view per window. */
export const viewDedup = pgTable(
  'view_dedup',
  {
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    visitor: text('visitor').notNull(),
    countedAt: timestamp('counted_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.skillId, t.visitor] })],
);

/** Executions reported by the skill's own server; a paymentRef is counted once. */
export const skillCalls = pgTable(
  'skill_calls',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    amount: atomicAmount('amount'),
    paymentRef: text('payment_ref'),
    /** The authorization nonce of the payment in `paymentRef` (one of a batch), lower case. */
    paymentNonce: text('payment_nonce'),
    /** The on-chain check of `paymentRef`; its status says whether this call was paid. */
    paymentId: uuid('payment_id').references(() => paymentVerifications.id, { onDelete: 'set null' }),
    /** The amount the skill server's signed receipt of the call names (checked against the listing when recorded). */
    receiptAmount: atomicAmount('receipt_amount'),
    /**
     * The receipt against the chain: `pending` until the payment is checked, then `matches` or
     * `mismatch` (the receipt names another amount than the chain shows moved: flagged; revenue
     * is what the chain shows either way). Null: the call came without a receipt.
     */
    receiptCheck: text('receipt_check', { enum: ['pending', 'matches', 'mismatch'] }),
    /**
     * Volume prices: the tier that priced the call, as its step's `after` (0: the base price), as
     * the skill server reported it and the listing allowed (analytics/tiers.ts); null: not said or not believed.
     */
    tierAfter: integer('tier_after'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('skill_calls_payment_key').on(t.skillId, t.paymentRef, sql`coalesce(${t.paymentNonce}, '')`),
    index('skill_calls_skill_idx').on(t.skillId, t.createdAt),
  ],
);

/** Usage reported by consumers; it counts as revenue only through its verified payment (`payment_id`). */
export const usageRecords = pgTable(
  'usage_records',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    amount: atomicAmount('amount').notNull(),
    paymentRef: text('payment_ref'),
    /** The on-chain check of `paymentRef` (pending, verified or rejected); null without a reference. */
    paymentId: uuid('payment_id').references(() => paymentVerifications.id, { onDelete: 'set null' }),
    /**
     * The payment channel (x402 `batch-settlement`) the call was paid over, lower case; null for a
     * transfer. Its state (earned, claimed, settled) is the channel's call record of the same
     * skill and cumulative charge (channel_calls).
     */
    channelId: text('channel_id'),
    /** The channel's cumulative charge after the call; null for a transfer (or an older client's deposit record). */
    cumulative: atomicAmount('cumulative'),
    /** The transaction of the channel's deposit the call made, when it made one (lower case). */
    depositTransaction: text('deposit_transaction'),
    /** What that deposit put into the channel, when the client said. */
    depositAmount: atomicAmount('deposit_amount'),
    /** The skill server's signed receipt of the call (x402/receipt.ts), as the buyer kept it; checked against the listing when recorded. */
    receipt: jsonb('receipt'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('usage_records_payment_ref_key').on(t.skillId, t.paymentRef),
    uniqueIndex('usage_records_channel_key').on(t.userId, t.skillId, t.channelId, t.cumulative),
    index('usage_records_user_idx').on(t.userId, t.createdAt),
  ],
);

export const favorites = pgTable(
  'favorites',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.skillId] }), index('favorites_skill_idx').on(t.skillId)],
);

/** Each wallet that paid a skill, with its verified paid calls: the buyers a skill is ranked by. */
export const skillBuyers = pgTable(
  'skill_buyers',
  {
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    /** The paying wallet, lower case. */
    payer: text('payer').notNull(),
    paidCalls: integer('paid_calls').notNull(),
  },
  (t) => [primaryKey({ columns: [t.skillId, t.payer] })],
);
