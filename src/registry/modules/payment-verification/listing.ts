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
 * The receipt of the skill server's call record naming a payment (one, a mismatch first, should
 * two records name it): its check against the chain and its amount.
 */
const receiptOf = (() => {
  // Qualified by hand: a select from one table names its columns without their table.
  const first = (column: string) =>
    sql.raw(
      `(select sc.${column} from skill_calls sc where sc.payment_id = payment_verifications.id and sc.receipt_check is not null order by (sc.receipt_check = 'mismatch') desc limit 1)`,
    );
  return {
    check: first('receipt_check') as SQL<'pending' | 'matches' | 'mismatch' | null>,
    amount: first('receipt_amount::text') as SQL<string | null>,
  };
})();

/**
 * A skill's reported payments, newest report first, optionally of one state, one page at a time: a
 * keyset cursor over (createdAt, id), so pages neither repeat nor skip checks added meanwhile.
 * The caller has checked that the reader is the skill's creator, and decoded the cursor (`after`).
 */
export async function listSkillPayments(
  db: Database,
  chain: Pick<ChainConfig, 'network' | 'usdcDecimals'>,
  skillId: string,
  query: Pick<SkillPaymentsQuery, 'state' | 'receipt'> & { after: readonly [string, string] | undefined },
  limit: number,
): Promise<{ payments: SkillPaymentView[]; nextCursor: string | undefined }> {
  const filters: SQL[] = [eq(paymentVerifications.skillId, skillId)];
  if (query.state) filters.push(eq(paymentVerifications.status, query.state));
  if (query.receipt) filters.push(sql`${receiptOf.check} = ${query.receipt}`);
  if (query.after) {
    const [createdAt, id] = query.after;
    filters.push(sql`(${paymentVerifications.createdAt}, ${paymentVerifications.id}) < (${createdAt}::timestamptz, ${id}::uuid)`);
  }
  const rows = await db
    .select({ check: paymentVerifications, receiptCheck: receiptOf.check, receiptAmount: receiptOf.amount })
    .from(paymentVerifications)
    .where(and(...filters))
    .orderBy(desc(paymentVerifications.createdAt), desc(paymentVerifications.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1]?.check;
  return {
    payments: page.map(({ check: r, receiptCheck, receiptAmount }) => ({
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
      receiptCheck: receiptCheck ?? null,
      receiptAmountAtomic: receiptAmount ?? null,
      paidAtomic: r.status === 'verified' ? (r.amount?.toString() ?? null) : null,
    })),
    nextCursor: rows.length > limit && last ? encodeCursor(last.createdAt.toISOString(), last.id) : undefined,
  };
}
