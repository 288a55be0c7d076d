import { bigint, integer, pgTable, text } from 'drizzle-orm/pg-core';

/**
 * Fixed-window request counters shared by every registry instance on one PostgreSQL.
 * `window_start` is the window's start in epoch milliseconds.
 */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  windowStart: bigint('window_start', { mode: 'number' }).notNull(),
  count: integer('count').notNull(),
});
