/**
 * A creator's payout ledger: per skill and day (UTC, the day a payment was first reported), the
 * paid calls and the revenue verified on chain — the same verified payments the counters add up,
 * so its totals equal what the chain shows paid to the creator's skills. As CSV for their books.
 */
import { and, eq, gte, isNotNull, lt, sql } from 'drizzle-orm';
import { paymentVerifications, skills } from '../../../db/schema';
import type { ServiceContext } from '../../context';

export interface RevenueRow {
  day: string;
  skill: string;
  paidCalls: number;
  revenueAtomic: bigint;
}

/** The caller's verified revenue per skill and day, oldest first, within [from, to) when given. */
export async function revenueLedger(ctx: ServiceContext, creatorId: string, range: { from?: Date; to?: Date } = {}): Promise<RevenueRow[]> {
  const day = sql<string>`to_char(${paymentVerifications.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await ctx.db
    .select({
      day,
      skill: skills.slug,
      paidCalls: sql<number>`count(*)::int`,
      revenueAtomic: sql<string>`coalesce(sum(${paymentVerifications.amount}), 0)::text`,
    })
    .from(paymentVerifications)
    .innerJoin(skills, eq(skills.id, paymentVerifications.skillId))
    .where(
      and(
        eq(skills.creatorId, creatorId),
        eq(paymentVerifications.status, 'verified'),
        // The check that counted its transfer (a repeated report of it is verified without one).
        isNotNull(paymentVerifications.logIndex),
        range.from ? gte(paymentVerifications.createdAt, range.from) : undefined,
        range.to ? lt(paymentVerifications.createdAt, range.to) : undefined,
      ),
    )
    .groupBy(day, skills.slug)
    .orderBy(day, skills.slug);
  return rows.map((r) => ({ day: r.day, skill: r.skill, paidCalls: Number(r.paidCalls), revenueAtomic: BigInt(r.revenueAtomic) }));
}

/** USDC with its 6 decimals, exact (a bigint never goes through a float). */
function usdcText(atomic: bigint): string {
  return `${atomic / 1_000_000n}.${(atomic % 1_000_000n).toString().padStart(6, '0')}`;
}

/** The ledger as CSV (RFC 4180): a header, one line per skill and day, a total line. */
export function revenueCsv(rows: readonly RevenueRow[]): string {
  const quote = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  const lines = ['date,skill,paid_calls,revenue_usdc,revenue_atomic'];
  for (const r of rows) lines.push([r.day, quote(r.skill), r.paidCalls, usdcText(r.revenueAtomic), r.revenueAtomic].join(','));
  const calls = rows.reduce((n, r) => n + r.paidCalls, 0);
  const total = rows.reduce((n, r) => n + r.revenueAtomic, 0n);
  lines.push(['total', '', calls, usdcText(total), total].join(','));
  return `${lines.join('\r\n')}\r\n`;
}
