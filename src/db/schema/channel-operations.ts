import { sql } from 'drizzle-orm';
import { bigint, check, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Every transaction the facilitator sends for the `batch-settlement` scheme (payment channels),
 * written before it is broadcast: a `deposit` (an ERC-3009 authorization into a channel), a
 * `claim` (one claimWithSignature over the vouchers of many channels), a `settle` (a receiver's
 * sweep) or a `refund` (a cooperative refund, with its claim). `key` is unique: a deposit's is its
 * authorization's own single-use key (network, token, payer, nonce), a refund's its channel and
 * refund nonce, so no two requests, on any instance sharing the database, send the same one.
 *
 * `state`: `queued` (recorded, not yet signed) → `sent` (signed; `tx_hash` written before the
 * broadcast) → `confirmed` | `reverted` | `failed` (refused by the node, or never mined). A row
 * left `queued`, or `sent` with a transaction the node never saw, by a process that stopped is
 * sent by the next start (channels/resume.ts): the stored `call_data` is the whole transaction.
 */
export const channelOperations = pgTable(
  'channel_operations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    key: text('key').notNull().unique(),
    network: text('network').notNull(),
    kind: text('kind', { enum: ['deposit', 'claim', 'settle', 'refund'] }).notNull(),
    /** The x402BatchSettlement contract; `call_data` is its calldata. */
    target: text('target').notNull(),
    callData: text('call_data').notNull(),
    state: text('state', { enum: ['queued', 'sent', 'confirmed', 'reverted', 'failed'] }).notNull(),
    txHash: text('tx_hash'),
    relayer: text('relayer'),
    relayerNonce: bigint('relayer_nonce', { mode: 'number' }),
    blockNumber: bigint('block_number', { mode: 'number' }),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('channel_operations_open_idx').on(t.createdAt).where(sql`${t.state} in ('queued', 'sent')`),
    index('channel_operations_tx_hash_idx').on(t.txHash),
    check('channel_operations_state_check', sql`${t.state} in ('queued', 'sent', 'confirmed', 'reverted', 'failed')`),
    check('channel_operations_kind_check', sql`${t.kind} in ('deposit', 'claim', 'settle', 'refund')`),
  ],
);
