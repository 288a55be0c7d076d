import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { skills } from './catalogue';

/**
 * One reported payment to one skill, checked against the chain: the transaction's receipt must
 * hold a Transfer of the skill's asset to its payment address of exactly `expected_amount` (the
 * listed price when first reported). Only the chain and the listing decide the outcome, never
 * what a report claims, so a false report cannot spoil a real payment. Unique per transaction
 * and skill: however many records name it (our client, our skill server, another SDK), it counts
 * once, and only when `verified`. `rejected` rows keep the reason and never count.
 */
export const paymentVerifications = pgTable(
  'payment_verifications',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    /** The reference as reported; a transaction hash in lower case. */
    txHash: text('tx_hash').notNull(),
    status: text('status', { enum: ['pending', 'verified', 'rejected'] })
      .notNull()
      .default('pending'),
    reason: text('reason'),
    /** The listing when first reported: what the payment must be. */
    expectedAmount: bigint('expected_amount', { mode: 'bigint' }).notNull(),
    payTo: text('pay_to').notNull(),
    network: text('network').notNull(),
    /** From the chain once verified: who paid, how much, in which block. */
    payer: text('payer'),
    amount: bigint('amount', { mode: 'bigint' }),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('payment_verifications_tx_skill_key').on(t.skillId, t.txHash),
    index('payment_verifications_due_idx').on(t.status, t.nextAttemptAt),
    index('payment_verifications_payer_idx').on(t.payer, t.createdAt),
  ],
);
