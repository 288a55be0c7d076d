/**
 * The facilitator's persistence: accepted authorizations (the single-use ledger) and settlement
 * receipts. Every state change is one conditional statement (or one transaction), so concurrent
 * requests and several instances on one PostgreSQL never both win.
 */
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Address, Hex } from 'viem';
import type { Database } from '../db';
import { paymentAuthorizations as auths, paymentReceipts as receipts } from '../db/schema';
import type { SignerKind } from './chain';
import type { AuthorizationKey } from './request';
import type { PaymentReceipt, ReceiptStatus } from './types';

export type AuthorizationRow = typeof auths.$inferSelect;
export type ReceiptRow = typeof receipts.$inferSelect;

/** What verify (or a settle without verify) records about an accepted authorization. */
export interface NewAuthorization {
  key: AuthorizationKey;
  payee: Address;
  amount: string;
  validAfter: string;
  validBefore: string;
  payloadHash: string;
  signerKind: SignerKind;
}

/** A transaction about to be broadcast. */
export interface Submission {
  authorization: AuthorizationRow;
  txHash: Hex;
  relayer: Address;
  relayerNonce: number;
}

/** The final outcome of a transaction, and what it means for its authorization (if anything). */
export interface Outcome {
  status: Exclude<ReceiptStatus, 'pending'>;
  blockNumber?: number;
  error?: string;
  authorization?: { state: 'settled' | 'failed'; reason?: string };
}

/** A pending receipt with what the reconciler needs from its authorization. */
export type PendingReceipt = ReceiptRow & { validBefore: string; nonce: string };

export type PaymentStore = ReturnType<typeof createPaymentStore>;

export function createPaymentStore(db: Database) {
  const keyIs = (key: AuthorizationKey) =>
    and(eq(auths.network, key.network), eq(auths.asset, key.asset), eq(auths.payer, key.payer), eq(auths.nonce, key.nonce));

  return {
    /** True when this authorization was ever accepted here (any state). */
    async exists(key: AuthorizationKey): Promise<boolean> {
      const rows = await db.select({ id: auths.id }).from(auths).where(keyIs(key)).limit(1);
      return rows.length > 0;
    },

    /** Records an accepted authorization; undefined when its key is already taken (a replay). */
    async insert(entry: NewAuthorization, state: 'verified' | 'settling', now: Date): Promise<AuthorizationRow | undefined> {
      const rows = await db
        .insert(auths)
        .values({
          ...entry.key,
          payee: entry.payee,
          amount: entry.amount,
          validAfter: entry.validAfter,
          validBefore: entry.validBefore,
          payloadHash: entry.payloadHash,
          signerKind: entry.signerKind,
          state,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing({ target: [auths.network, auths.asset, auths.payer, auths.nonce] })
        .returning();
      return rows[0];
    },

    /** verified → settling for exactly the verified payload; only one caller ever gets the row. */
    async claimVerified(key: AuthorizationKey, payloadHash: string, now: Date): Promise<AuthorizationRow | undefined> {
      const rows = await db
        .update(auths)
        .set({ state: 'settling', updatedAt: now })
        .where(and(keyIs(key), eq(auths.state, 'verified'), eq(auths.payloadHash, payloadHash)))
        .returning();
      return rows[0];
    },

    /** settling → failed when nothing was (or could be) sent. */
    async fail(id: string, reason: string, now: Date): Promise<void> {
      await db
        .update(auths)
        .set({ state: 'failed', reason, updatedAt: now })
        .where(and(eq(auths.id, id), eq(auths.state, 'settling')));
    },

    /** Stores the receipt (pending) before the transaction is broadcast, so a crash cannot lose it. */
    async recordSubmission(s: Submission, now: Date): Promise<void> {
      const a = s.authorization;
      await db.transaction(async (tx) => {
        await tx.insert(receipts).values({
          txHash: s.txHash,
          authorizationId: a.id,
          network: a.network,
          asset: a.asset,
          payer: a.payer,
          payee: a.payee,
          amount: a.amount,
          relayer: s.relayer,
          relayerNonce: s.relayerNonce,
          status: 'pending',
          submittedAt: now,
          updatedAt: now,
        });
        await tx.update(auths).set({ txHash: s.txHash, updatedAt: now }).where(eq(auths.id, a.id));
      });
    },

    /**
     * Records a transaction's final outcome once: false when it was already final (the settle
     * call and the reconciler may both see the receipt).
     */
    async finalize(txHash: Hex, outcome: Outcome, now: Date): Promise<boolean> {
      return db.transaction(async (tx) => {
        const rows = await tx
          .update(receipts)
          .set({
            status: outcome.status,
            blockNumber: outcome.blockNumber ?? null,
            error: outcome.error ?? null,
            updatedAt: now,
            finalizedAt: now,
          })
          .where(and(eq(receipts.txHash, txHash), eq(receipts.status, 'pending')))
          .returning({ authorizationId: receipts.authorizationId });
        const row = rows[0];
        if (!row) return false;
        if (!outcome.authorization) return true;
        const { state, reason } = outcome.authorization;
        await tx
          .update(auths)
          .set({ state, reason: reason ?? null, updatedAt: now })
          .where(and(eq(auths.id, row.authorizationId), eq(auths.state, 'settling')));
        return true;
      });
    },

    async receipt(txHash: string): Promise<ReceiptRow | undefined> {
      const rows = await db.select().from(receipts).where(eq(receipts.txHash, txHash.toLowerCase())).limit(1);
      return rows[0];
    },

    async authorization(key: AuthorizationKey): Promise<AuthorizationRow | undefined> {
      const rows = await db.select().from(auths).where(keyIs(key)).limit(1);
      return rows[0];
    },

    /** The oldest pending receipts, for the reconciler. */
    async pending(limit: number): Promise<PendingReceipt[]> {
      return db
        .select({ ...receiptColumns, validBefore: auths.validBefore, nonce: auths.nonce })
        .from(receipts)
        .innerJoin(auths, eq(auths.id, receipts.authorizationId))
        .where(eq(receipts.status, 'pending'))
        .orderBy(asc(receipts.submittedAt))
        .limit(limit);
    },

    /**
     * Authorizations claimed for settling that never got a transaction (the process stopped in
     * between) and have expired, so none can follow: settling → failed. Returns how many.
     */
    async abandonExpired(nowSeconds: number, reason: string, now: Date): Promise<number> {
      const rows = await db
        .update(auths)
        .set({ state: 'failed', reason, updatedAt: now })
        .where(and(eq(auths.state, 'settling'), isNull(auths.txHash), lt(auths.validBefore, sql`${String(nowSeconds)}::numeric`)))
        .returning({ id: auths.id });
      return rows.length;
    },
  };
}

const receiptColumns = {
  txHash: receipts.txHash,
  authorizationId: receipts.authorizationId,
  network: receipts.network,
  asset: receipts.asset,
  payer: receipts.payer,
  payee: receipts.payee,
  amount: receipts.amount,
  relayer: receipts.relayer,
  relayerNonce: receipts.relayerNonce,
  status: receipts.status,
  blockNumber: receipts.blockNumber,
  error: receipts.error,
  submittedAt: receipts.submittedAt,
  updatedAt: receipts.updatedAt,
  finalizedAt: receipts.finalizedAt,
};

/** The public form of a stored receipt. */
export function toPaymentReceipt(row: ReceiptRow): PaymentReceipt {
  return {
    transaction: row.txHash as Hex,
    status: row.status,
    network: row.network,
    asset: row.asset as Address,
    payer: row.payer as Address,
    payee: row.payee as Address,
    amount: row.amount,
    relayer: row.relayer as Address,
    blockNumber: row.blockNumber,
    error: row.error,
    submittedAt: row.submittedAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finalizedAt: row.finalizedAt?.toISOString() ?? null,
  };
}
