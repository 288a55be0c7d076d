import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { atomicAmount } from './amounts';
import { skills } from './catalogue';

/**
 * One reported payment to one skill, checked against the chain: the transaction's receipt must
 * hold a Transfer of the skill's asset to its payment address of exactly `expected_amount` (the
 * listed price when first reported). Only the chain and the listing decide the outcome, never
 * what a report claims, so a false report cannot spoil a real payment. A report is unique per
 * skill, transaction and authorization nonce (none for a bare transaction hash), so repeating it
 * changes nothing. A payment is one transfer, identified by (transaction, log index): once a
 * check counts it (`log_index` set), no other check anywhere counts it again, so one transfer is
 * one paid call of one skill, and a batch of many transfers in one transaction counts each.
 * `verified` rows without a log index are further reports of a payment already counted for the
 * same skill. `rejected` rows keep the reason and never count.
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
    /** The EIP-3009 authorization nonce the skill server settled (lower case), naming one payment in a batch. */
    nonce: text('nonce'),
    status: text('status', { enum: ['pending', 'verified', 'rejected'] })
      .notNull()
      .default('pending'),
    reason: text('reason'),
    /** The listing when first reported: what the payment must be. */
    expectedAmount: atomicAmount('expected_amount').notNull(),
    payTo: text('pay_to').notNull(),
    network: text('network').notNull(),
    /** From the chain once verified: who paid, how much, in which block. */
    payer: text('payer'),
    amount: atomicAmount('amount'),
    blockNumber: bigint('block_number', { mode: 'bigint' }),
    /** How the chain shows it was paid once verified: `exact` (a transfer of the price) or `upto` (a settlement of at most it). */
    scheme: text('scheme', { enum: ['exact', 'upto'] }),
    /** The counted transfer's log index in the transaction; null until counted, or for a repeat of a counted payment. */
    logIndex: integer('log_index'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('payment_verifications_report_key').on(t.skillId, t.txHash, sql`coalesce(${t.nonce}, '')`),
    uniqueIndex('payment_verifications_transfer_key').on(t.txHash, t.logIndex),
    index('payment_verifications_due_idx').on(t.status, t.nextAttemptAt),
    index('payment_verifications_payer_idx').on(t.payer, t.createdAt),
  ],
);
