import { and, asc, eq, lte, or, sql } from 'drizzle-orm';
import type { PaymentVerificationConfig } from '../../../config';
import type { Database } from '../../../db';
import { paymentVerifications, skills } from '../../../db/schema';
import { countPaidCall } from '../analytics';
import { emitEvent } from '../webhooks';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Verification = typeof paymentVerifications.$inferSelect;

/** The listing a reported payment is checked against. */
export interface ListedSkill {
  id: string;
  priceAtomic: bigint;
  paymentAddress: string;
  network: string;
}

const TX_HASH = /^0x[0-9a-f]{64}$/;

/**
 * Puts a reported payment reference up for an on-chain check and returns the check's id: the
 * existing one when the transaction was already reported for this skill (by anyone), so each
 * transaction counts at most once per skill. A reference that is not a transaction hash is
 * rejected at once. `created` tells whether this report was the first.
 */
export async function nominatePayment(
  db: Database | Tx,
  skill: ListedSkill,
  reference: string,
  now: Date,
): Promise<{ id: string; created: boolean }> {
  const [nominated] = await nominatePayments(db, [{ skill, reference }], now);
  return nominated!;
}

/**
 * {@link nominatePayment} for many references at once (a batch of call records), one statement
 * for the new checks and one for the existing ones; answers in the order given. A reference named
 * twice is `created` at most once.
 */
export async function nominatePayments(
  db: Database | Tx,
  payments: readonly { skill: ListedSkill; reference: string }[],
  now: Date,
): Promise<{ id: string; created: boolean }[]> {
  if (payments.length === 0) return [];
  const rows = payments.map(({ skill, reference }) => {
    const txHash = /^0x[0-9a-fA-F]{64}$/.test(reference) ? reference.toLowerCase() : reference;
    return {
      skillId: skill.id,
      txHash,
      expectedAmount: skill.priceAtomic,
      payTo: skill.paymentAddress,
      network: skill.network,
      ...(TX_HASH.test(txHash) ? {} : { status: 'rejected' as const, reason: 'not a transaction hash', decidedAt: now }),
      nextAttemptAt: now,
      createdAt: now,
    };
  });
  const key = (r: { skillId: string; txHash: string }) => `${r.skillId}\n${r.txHash}`;
  // One row per check, in one order for every caller, so concurrent batches never deadlock.
  const distinct = [...new Map(rows.map((r) => [key(r), r])).values()].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
  const inserted = await db
    .insert(paymentVerifications)
    .values(distinct)
    .onConflictDoNothing()
    .returning({ id: paymentVerifications.id, skillId: paymentVerifications.skillId, txHash: paymentVerifications.txHash });
  const ids = new Map(inserted.map((r) => [key(r), r.id]));
  const created = new Set(ids.keys());
  const missing = distinct.filter((r) => !ids.has(key(r)));
  if (missing.length > 0) {
    const existing = await db
      .select({ id: paymentVerifications.id, skillId: paymentVerifications.skillId, txHash: paymentVerifications.txHash })
      .from(paymentVerifications)
      .where(or(...missing.map((r) => and(eq(paymentVerifications.skillId, r.skillId), eq(paymentVerifications.txHash, r.txHash)))));
    for (const r of existing) ids.set(key(r), r.id);
  }
  return rows.map((r) => {
    const id = ids.get(key(r));
    if (!id) throw new Error('payment verification vanished after a conflicting insert');
    return { id, created: created.delete(key(r)) };
  });
}

/** Pending checks whose time has come, oldest first. */
export function duePayments(db: Database, now: Date, limit: number): Promise<Verification[]> {
  return db
    .select()
    .from(paymentVerifications)
    .where(and(eq(paymentVerifications.status, 'pending'), lte(paymentVerifications.nextAttemptAt, now)))
    .orderBy(asc(paymentVerifications.nextAttemptAt))
    .limit(limit);
}

/** Takes a due check for `leaseSeconds`, so two registry instances never run the same one. */
export async function claimPayment(db: Database, id: string, now: Date, leaseSeconds: number): Promise<boolean> {
  const claimed = await db
    .update(paymentVerifications)
    .set({ nextAttemptAt: new Date(now.getTime() + leaseSeconds * 1000) })
    .where(and(eq(paymentVerifications.id, id), eq(paymentVerifications.status, 'pending'), lte(paymentVerifications.nextAttemptAt, now)))
    .returning({ id: paymentVerifications.id });
  return claimed.length > 0;
}

/**
 * Marks a check verified and, in the same transaction and only on that transition, counts it:
 * one paid call and its amount as revenue, on the day it was first reported.
 */
export async function markVerified(
  db: Database,
  id: string,
  found: { payer: string; amount: bigint; blockNumber: bigint },
  now: Date,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(paymentVerifications)
      .set({
        status: 'verified',
        reason: null,
        payer: found.payer,
        amount: found.amount,
        blockNumber: found.blockNumber,
        decidedAt: now,
        attempts: sql`${paymentVerifications.attempts} + 1`,
      })
      .where(and(eq(paymentVerifications.id, id), eq(paymentVerifications.status, 'pending')))
      .returning({
        skillId: paymentVerifications.skillId,
        createdAt: paymentVerifications.createdAt,
        txHash: paymentVerifications.txHash,
        network: paymentVerifications.network,
      });
    if (!row) return false;
    await countPaidCall(tx, row.skillId, found.amount, row.createdAt);
    // The creator hears of it in the same transaction: an event exists exactly when the call counts.
    const [skill] = await tx.select({ creatorId: skills.creatorId, slug: skills.slug }).from(skills).where(eq(skills.id, row.skillId));
    if (skill) {
      await emitEvent(tx, {
        userId: skill.creatorId,
        type: 'call.paid',
        at: now,
        data: {
          skill: skill.slug,
          amount: found.amount.toString(),
          payer: found.payer,
          scheme: 'exact',
          transaction: row.txHash,
          network: row.network,
          blockNumber: found.blockNumber.toString(),
          reportedAt: row.createdAt.toISOString(),
        },
      });
    }
    return true;
  });
}

export async function markRejected(db: Database, id: string, reason: string, now: Date): Promise<void> {
  await db
    .update(paymentVerifications)
    .set({ status: 'rejected', reason: reason.slice(0, 500), decidedAt: now, attempts: sql`${paymentVerifications.attempts} + 1` })
    .where(and(eq(paymentVerifications.id, id), eq(paymentVerifications.status, 'pending')));
}

/** An inconclusive check: try again later (the pause doubles), or reject after the last attempt. */
export async function markInconclusive(
  db: Database,
  check: Verification,
  reason: string,
  now: Date,
  config: PaymentVerificationConfig,
): Promise<'retry' | 'rejected'> {
  const attempts = check.attempts + 1;
  if (attempts >= config.maxAttempts) {
    await markRejected(db, check.id, `${reason} after ${attempts} checks`, now);
    return 'rejected';
  }
  const pause = Math.min(config.retryBaseSeconds * 2 ** (attempts - 1), 3600);
  await db
    .update(paymentVerifications)
    .set({ attempts, reason: reason.slice(0, 500), nextAttemptAt: new Date(now.getTime() + pause * 1000) })
    .where(and(eq(paymentVerifications.id, check.id), eq(paymentVerifications.status, 'pending')));
  return 'retry';
}
