import { sql } from 'drizzle-orm';
import { check, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { atomicAmount } from './amounts';

/**
 * Every `upto` authorization (a Permit2 witness transfer of at most `max_amount`) the facilitator
 * has accepted, once: the unique key on (network, asset, payer, nonce) is Permit2's own single-use
 * key, so a second verify or settle of the same authorization, from any instance sharing the
 * database, cannot insert it again. Addresses EIP-55 checksummed, the nonce a decimal string.
 *
 * `state`: `verified` (checked, not settled) → `settling` (claimed by one settle, `amount` the
 * charge it asked for) → `settled` | `failed`. Until it is final or its `deadline` passes, a row's
 * `max_amount` counts against the payer's balance and Permit2 allowance (what else it may verify).
 */
export const uptoAuthorizations = pgTable(
  'upto_authorizations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    network: text('network').notNull(),
    asset: text('asset').notNull(),
    payer: text('payer').notNull(),
    nonce: text('nonce').notNull(),
    payee: text('payee').notNull(),
    /** The relayer the witness names: the only account that may send its settlement. */
    facilitator: text('facilitator').notNull(),
    maxAmount: atomicAmount('max_amount').notNull(),
    /** Unix seconds (Permit2's deadline). */
    deadline: atomicAmount('deadline').notNull(),
    payloadHash: text('payload_hash').notNull(),
    state: text('state', { enum: ['verified', 'settling', 'settled', 'failed'] }).notNull(),
    /** The charge a settle asked for (at most `max_amount`). */
    amount: atomicAmount('amount'),
    reason: text('reason'),
    txHash: text('tx_hash'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('upto_authorizations_single_use_key').on(t.network, t.asset, t.payer, t.nonce),
    /** What a payer's balance and allowance must still cover per asset. */
    index('upto_authorizations_open_idx').on(t.payer, t.asset).where(sql`${t.state} in ('verified', 'settling')`),
    check('upto_authorizations_state_check', sql`${t.state} in ('verified', 'settling', 'settled', 'failed')`),
  ],
);
