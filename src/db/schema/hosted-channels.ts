import { index, jsonb, numeric, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Payment channels a facilitator keeps for the skill servers of a receiver (`market serve
 * --channels-store facilitator`): several servers and instances of one payee take a payer's
 * channel through one state. A call holds the channel's lease (`lease_id` until `lease_until`)
 * from reading the state to writing the next one, so calls on a channel go one at a time across
 * every server; a lease that lapsed (its server died mid-call) is taken by the next, and a write
 * under a lapsed lease is refused. `state` is the SDK's ChannelState; null for a channel leased
 * but never written (its first payment was refused).
 */
export const hostedChannels = pgTable(
  'hosted_channels',
  {
    channelId: text('channel_id').primaryKey(),
    /** The channel's receiver (lowercase): the key bound to it is what reads and writes the row. */
    receiver: text('receiver').notNull(),
    state: jsonb('state'),
    /** The state's chargedCumulativeAmount, atomic units, for reading without the JSON. */
    chargedCumulativeAmount: numeric('charged_cumulative_amount', { precision: 39, scale: 0 }).notNull().default('0'),
    leaseId: text('lease_id'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('hosted_channels_receiver').on(table.receiver)],
);

/** One claim round at a time per receiver across the servers sharing its hosted channels. */
export const hostedChannelClaims = pgTable('hosted_channel_claims', {
  receiver: text('receiver').primaryKey(),
  leaseId: text('lease_id').notNull(),
  leaseUntil: timestamp('lease_until', { withTimezone: true }).notNull(),
});
