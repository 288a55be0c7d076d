import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { atomicAmount } from './amounts';
import { skills } from './catalogue';

/**
 * A payment channel of the x402 `batch-settlement` scheme some call record named, and what the
 * chain last showed of it: the config from its `ChannelCreated` event (null until found), its
 * balance and `totalClaimed` from `channels(channelId)`, and `settled_claimed`, the part of
 * `totalClaimed` a later `settle` of its receiver swept out. A channel is `watching` while it has
 * calls not yet decided or claims not yet settled; `idle` otherwise, until a new call record names it.
 */
export const paymentChannels = pgTable(
  'payment_channels',
  {
    /** bytes32 hex, lower case. */
    channelId: text('channel_id').primaryKey(),
    /** CAIP-2 network of the skill whose call first named it. */
    network: text('network').notNull(),
    payer: text('payer'),
    receiver: text('receiver'),
    token: text('token'),
    balance: atomicAmount('balance'),
    totalClaimed: atomicAmount('total_claimed').notNull().default(sql`0`),
    settledClaimed: atomicAmount('settled_claimed').notNull().default(sql`0`),
    /** A timed withdrawal the payer started (`pendingWithdrawals`): its amount (0 when none) and when it started. */
    withdrawAmount: atomicAmount('withdraw_amount').notNull().default(sql`0`),
    withdrawInitiatedAt: timestamp('withdraw_initiated_at', { withTimezone: true }),
    status: text('status', { enum: ['watching', 'idle'] })
      .notNull()
      .default('watching'),
    /** Why the last check could not decide (the channel is not on chain yet, the RPC failed). */
    reason: text('reason'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    checkedAt: timestamp('checked_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('payment_channels_due_idx').on(t.status, t.nextAttemptAt), index('payment_channels_payer_idx').on(t.payer)],
);

/**
 * A call paid over a channel, as the skill server reported it: the channel's cumulative charge
 * after the call and the call's own charge (atomic units). `earned` until the chain shows the
 * channel claimed at least that far; then `counted` (a paid call and revenue) or `refused` with
 * the reason (see src/registry/modules/channel-revenue/store.ts for the rule). One record per
 * channel, cumulative charge and skill.
 */
export const channelCalls = pgTable(
  'channel_calls',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    channelId: text('channel_id')
      .notNull()
      .references(() => paymentChannels.channelId, { onDelete: 'cascade' }),
    cumulative: atomicAmount('cumulative').notNull(),
    amount: atomicAmount('amount').notNull(),
    status: text('status', { enum: ['earned', 'counted', 'refused'] })
      .notNull()
      .default('earned'),
    reason: text('reason'),
    /**
     * The EIP-712 digest of the payer's voucher for this cumulative charge (lower case): how an
     * older consumer client named the call in its usage record (a `paymentRef` that is no
     * transaction), so that record can be told for what it is.
     */
    voucherDigest: text('voucher_digest'),
    /** Volume prices: the tier that priced the call (its step's `after`, 0: base), as for skill_calls; null: not said or not believed. */
    tierAfter: integer('tier_after'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('channel_calls_cumulative_key').on(t.channelId, t.cumulative, t.skillId),
    index('channel_calls_skill_idx').on(t.skillId, t.createdAt),
    index('channel_calls_voucher_idx').on(t.skillId, t.voucherDigest),
  ],
);
