import { jsonb, numeric, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The payment channels of a creator's skill server (`market serve` with DATABASE_URL): one row per
 * channel holding its state as the SDK's channel store writes it (config, cumulative charge, the
 * latest voucher, the chain mirror). Several instances of one server share it: a call takes the
 * channel's row lock for its whole run, so a voucher is charged once. `state` is null for a row
 * made only to be locked (a channel whose first payment was refused).
 */
export const channelVouchers = pgTable('channel_vouchers', {
  channelId: text('channel_id').primaryKey(),
  state: jsonb('state'),
  /** The state's chargedCumulativeAmount, atomic units, for reading without the JSON. */
  chargedCumulativeAmount: numeric('charged_cumulative_amount', { precision: 39, scale: 0 }).notNull().default('0'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
