import { bigint, date, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { skills } from './catalogue';
import { users } from './users';

/** Running counters per skill, updated atomically with each record (no lost updates). */
export const skillStats = pgTable(
  'skill_stats',
  {
    skillId: uuid('skill_id')
      .primaryKey()
      .references(() => skills.id, { onDelete: 'cascade' }),
    viewCount: integer('view_count').notNull().default(0),
    callCount: integer('call_count').notNull().default(0),
    favoriteCount: integer('favorite_count').notNull().default(0),
    /** Sum of usage amounts, micro-USDC. */
    totalRevenue: bigint('total_revenue', { mode: 'bigint' }).notNull().default(sql`0`),
    lastCalledAt: timestamp('last_called_at', { withTimezone: true }),
    lastViewedAt: timestamp('last_viewed_at', { withTimezone: true }),
  },
  (t) => [index('skill_stats_calls_idx').on(t.callCount), index('skill_stats_revenue_idx').on(t.totalRevenue)],
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
    revenue: bigint('revenue', { mode: 'bigint' }).notNull().default(sql`0`),
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
    amount: bigint('amount', { mode: 'bigint' }),
    paymentRef: text('payment_ref'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('skill_calls_payment_ref_key').on(t.skillId, t.paymentRef), index('skill_calls_skill_idx').on(t.skillId, t.createdAt)],
);

/** Paid usage recorded by consumers; revenue is the sum of these amounts (micro-USDC). */
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
    amount: bigint('amount', { mode: 'bigint' }).notNull(),
    paymentRef: text('payment_ref'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('usage_records_payment_ref_key').on(t.skillId, t.paymentRef), index('usage_records_user_idx').on(t.userId, t.createdAt)],
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
