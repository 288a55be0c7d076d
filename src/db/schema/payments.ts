import { sql } from 'drizzle-orm';
import { bigint, check, index, numeric, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** A uint256 in atomic units (or unix seconds): exact, never floating point. */
const uint256 = (name: string) => numeric(name, { precision: 78, scale: 0 });

/**
 * Every EIP-3009 authorization the facilitator has accepted, once: the unique key on
 * (network, asset, payer, nonce) is the token's own single-use key, so a second verify or settle
 * of the same proof, from any instance sharing the database, cannot insert it again.
 * Addresses are EIP-55 checksummed, the nonce lowercase hex, so equality is exact.
 *
 * `state`: `verified` (checked, not settled) → `settling` (claimed by one settle) → `settled` |
 * `failed`. `signer_kind` is the verify-time signature check (`ecdsa` or `erc1271`), which settle
 * reuses when `payload_hash` shows the payload is the one verified.
 */
export const paymentAuthorizations = pgTable(
  'payment_authorizations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    network: text('network').notNull(),
    asset: text('asset').notNull(),
    payer: text('payer').notNull(),
    nonce: text('nonce').notNull(),
    payee: text('payee').notNull(),
    amount: uint256('amount').notNull(),
    validAfter: uint256('valid_after').notNull(),
    validBefore: uint256('valid_before').notNull(),
    payloadHash: text('payload_hash').notNull(),
    signerKind: text('signer_kind', { enum: ['ecdsa', 'erc1271'] }).notNull(),
    state: text('state', { enum: ['verified', 'settling', 'settled', 'failed'] }).notNull(),
    /** Why a settlement failed (a facilitator reason string). */
    reason: text('reason'),
    txHash: text('tx_hash'),
    /**
     * The `transferWithAuthorization` calldata of an authorization, stored when it is claimed for
     * settling, so that one its process never sent (it stopped in between, or was still queueing
     * it for a batch) is sent by the reconciler while the authorization is still valid.
     */
    batchCall: text('batch_call'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('payment_authorizations_single_use_key').on(t.network, t.asset, t.payer, t.nonce),
    index('payment_authorizations_settling_idx').on(t.validBefore).where(sql`${t.state} = 'settling'`),
    /** What a payer's balance must still cover per asset (verified, or settling: claimed, sent, not yet final). */
    index('payment_authorizations_owed_idx').on(t.payer, t.asset).where(sql`${t.state} in ('verified', 'settling')`),
    /** The members of a batched settlement transaction (payment_batches). */
    index('payment_authorizations_tx_hash_idx').on(t.txHash).where(sql`${t.txHash} is not null`),
    check('payment_authorizations_state_check', sql`${t.state} in ('verified', 'settling', 'settled', 'failed')`),
    check('payment_authorizations_signer_kind_check', sql`${t.signerKind} in ('ecdsa', 'erc1271')`),
  ],
);

/**
 * One row per settlement transaction, written before it is broadcast (its hash is known once
 * signed), so a crash never loses a sent transfer. `pending` until the reconciler or the settle
 * call sees the outcome: `confirmed`, `reverted`, or `dropped` (never mined).
 */
export const paymentReceipts = pgTable(
  'payment_receipts',
  {
    txHash: text('tx_hash').primaryKey(),
    authorizationId: uuid('authorization_id')
      .notNull()
      .references(() => paymentAuthorizations.id),
    network: text('network').notNull(),
    asset: text('asset').notNull(),
    payer: text('payer').notNull(),
    payee: text('payee').notNull(),
    amount: uint256('amount').notNull(),
    relayer: text('relayer').notNull(),
    relayerNonce: bigint('relayer_nonce', { mode: 'number' }).notNull(),
    status: text('status', { enum: ['pending', 'confirmed', 'reverted', 'dropped'] }).notNull(),
    blockNumber: bigint('block_number', { mode: 'number' }),
    error: text('error'),
    submittedAt: timestamp('submitted_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    /** When the final status was recorded. */
    finalizedAt: timestamp('finalized_at', { withTimezone: true }),
  },
  (t) => [
    index('payment_receipts_pending_idx').on(t.submittedAt).where(sql`${t.status} = 'pending'`),
    index('payment_receipts_authorization_id_idx').on(t.authorizationId),
    /** A payer's reverted settlements, which refuse their next authorizations for a while. */
    index('payment_receipts_reverted_idx').on(t.payer, t.asset, t.finalizedAt).where(sql`${t.status} = 'reverted'`),
    check('payment_receipts_status_check', sql`${t.status} in ('pending', 'confirmed', 'reverted', 'dropped')`),
  ],
);

/**
 * One row per batched settlement transaction (Multicall3 `aggregate3`, one
 * `transferWithAuthorization` per member, each allowed to fail alone), written before it is
 * broadcast. Its members are the authorizations whose `tx_hash` is this hash; each gets its own
 * outcome from the receipt's `AuthorizationUsed` and `Transfer` logs. `pending` until the settle
 * call or the reconciler records that outcome: `confirmed`, `reverted`, or `dropped`.
 */
export const paymentBatches = pgTable(
  'payment_batches',
  {
    txHash: text('tx_hash').primaryKey(),
    network: text('network').notNull(),
    relayer: text('relayer').notNull(),
    relayerNonce: bigint('relayer_nonce', { mode: 'number' }).notNull(),
    /** Authorizations in the transaction. */
    size: bigint('size', { mode: 'number' }).notNull(),
    status: text('status', { enum: ['pending', 'confirmed', 'reverted', 'dropped'] }).notNull(),
    blockNumber: bigint('block_number', { mode: 'number' }),
    gasUsed: bigint('gas_used', { mode: 'number' }),
    error: text('error'),
    submittedAt: timestamp('submitted_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    finalizedAt: timestamp('finalized_at', { withTimezone: true }),
  },
  (t) => [
    index('payment_batches_pending_idx').on(t.submittedAt).where(sql`${t.status} = 'pending'`),
    check('payment_batches_status_check', sql`${t.status} in ('pending', 'confirmed', 'reverted', 'dropped')`),
  ],
);
