import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { formatPrice } from 'skill-market/x402';
import type { SkillPaymentsQuery, SkillPaymentView } from 'skill-market/registry';
import type { Database } from '../../../db';
import { paymentVerifications } from '../../../db/schema';
import { encodeCursor } from '../../lib/cursor';
import { type ChainConfig, tokenDecimals } from '../../../config/chain';

/** How many of a skill's reported payments the chain check rejected (reverted transfers among them). */
export async function countRejectedPayments(db: Database, skillId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(paymentVerifications)
    .where(and(eq(paymentVerifications.skillId, skillId), eq(paymentVerifications.status, 'rejected')));
  return row?.n ?? 0;
}

/**
 * A skill's reported payments, newest report first, optionally of one state, one page at a time: a
 * keyset cursor over (createdAt, id), so pages neither repeat nor skip checks added meanwhile.
 * The caller has checked that the reader is the skill's creator, and decoded the cursor (`after`).
 */
export async function listSkillPayments(
  db: Database,
  chain: Pick<ChainConfig, 'network' | 'usdcDecimals'>,
  skillId: string,
  query: Pick<SkillPaymentsQuery, 'state'> & { after: readonly [string, string] | undefined },
  limit: number,
): Promise<{ payments: SkillPaymentView[]; nextCursor: string | undefined }> {
  const filters: SQL[] = [eq(paymentVerifications.skillId, skillId)];
  if (query.state) filters.push(eq(paymentVerifications.status, query.state));
  if (query.after) {
    const [createdAt, id] = query.after;
    filters.push(sql`(${paymentVerifications.createdAt}, ${paymentVerifications.id}) < (${createdAt}::timestamptz, ${id}::uuid)`);
  }
  const rows = await db
    .select()
    .from(paymentVerifications)
    .where(and(...filters))
    .orderBy(desc(paymentVerifications.createdAt), desc(paymentVerifications.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    payments: page.map((r) => ({
      id: r.id,
      txHash: r.txHash,
      network: r.network,
      amount: formatPrice(r.expectedAmount, tokenDecimals(chain, r.network)),
      amountAtomic: r.expectedAmount.toString(),
      state: r.status,
      reason: r.status === 'verified' ? null : r.reason,
      payer: r.payer,
      reportedAt: r.createdAt.toISOString(),
      decidedAt: r.decidedAt?.toISOString() ?? null,
    })),
    nextCursor: rows.length > limit && last ? encodeCursor(last.createdAt.toISOString(), last.id) : undefined,
  };
}
