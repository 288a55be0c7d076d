/**
 * A skill's paid calls and revenue split by how they were paid (exact transfers, usage-based
 * `upto` settlements, payment channels claimed on chain: the same figures the totals add up), and
 * its calls whose signed receipt disagrees with the chain.
 */
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { Database } from '../../../db';
import { paymentVerifications, skillCalls } from '../../../db/schema';
import type { ChannelTotals } from '../channel-revenue';

/** Paid calls and revenue (the token's atomic units) of one way of paying. */
export interface SchemeFigures {
  calls: number;
  revenueAtomic: bigint;
}

/** Per scheme: verified transfers by the scheme their check found, and the channel calls claimed. */
export async function schemeSplit(
  db: Database,
  skillId: string,
  channels: ChannelTotals,
): Promise<{ exact: SchemeFigures; upto: SchemeFigures; batchSettlement: SchemeFigures }> {
  const rows = await db
    .select({
      scheme: paymentVerifications.scheme,
      calls: sql<number>`count(*)::int`,
      revenue: sql<string>`coalesce(sum(${paymentVerifications.amount}), 0)::text`,
    })
    .from(paymentVerifications)
    .where(
      and(
        eq(paymentVerifications.skillId, skillId),
        eq(paymentVerifications.status, 'verified'),
        // The check that counted its transfer (a repeated report of it is verified without one).
        isNotNull(paymentVerifications.logIndex),
      ),
    )
    .groupBy(paymentVerifications.scheme);
  const exact: SchemeFigures = { calls: 0, revenueAtomic: 0n };
  const upto: SchemeFigures = { calls: 0, revenueAtomic: 0n };
  for (const r of rows) {
    // Checks decided before the scheme was kept are transfers of the price: exact (as the revenue ledger).
    const into = r.scheme === 'upto' ? upto : exact;
    into.calls += Number(r.calls);
    into.revenueAtomic += BigInt(r.revenue);
  }
  return { exact, upto, batchSettlement: { calls: channels.claimedCalls, revenueAtomic: channels.claimedAtomic } };
}

/** A skill's calls whose signed receipt names another amount than the chain shows their payment moved. */
export async function countReceiptMismatches(db: Database, skillId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(skillCalls)
    .where(and(eq(skillCalls.skillId, skillId), eq(skillCalls.receiptCheck, 'mismatch')));
  return Number(row?.n ?? 0);
}
