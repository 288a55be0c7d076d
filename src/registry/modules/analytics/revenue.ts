/**
 * A creator's payout ledger: per skill and day (UTC, the day a payment was first reported), the
 * paid calls and the revenue verified on chain — the same verified payments and claimed channel
 * calls the counters add up, so its totals equal what the chain shows paid to (or claimed for) the
 * creator's skills. Beside the total: the exact payments, the usage-based (`upto`) settlements, the channel calls claimed, the part of
 * those settled to the payment address, and channel calls earned but not yet claimed (not
 * revenue). As CSV for their books.
 */
import { and, eq, gte, isNotNull, lt, sql } from 'drizzle-orm';
import { paymentVerifications, skills } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { channelLedger } from '../channel-revenue';
import { fixedDecimals } from '../../lib/amounts';

export interface RevenueRow {
  day: string;
  skill: string;
  /** Exact and upto payments verified plus channel calls claimed. */
  paidCalls: number;
  revenueAtomic: bigint;
  exactAtomic: bigint;
  /** Usage-based settlements (`upto`): what each call was charged, at most its price. */
  uptoAtomic: bigint;
  channelClaimedAtomic: bigint;
  channelSettledAtomic: bigint;
  channelUnclaimedAtomic: bigint;
}

/** A ledger line's figures before anything is counted. */
const noFigures = (): Omit<RevenueRow, 'day' | 'skill'> => ({
  paidCalls: 0,
  revenueAtomic: 0n,
  exactAtomic: 0n,
  uptoAtomic: 0n,
  channelClaimedAtomic: 0n,
  channelSettledAtomic: 0n,
  channelUnclaimedAtomic: 0n,
});

/**
 * The instants [from, to) of the inclusive days `from`–`to` (YYYY-MM-DD, UTC, as the contract's
 * query admits them); the last day a timestamp can name (9999-12-31) has no end bound.
 */
export function dayRange(days: { from?: string; to?: string }): { from?: Date; to?: Date } {
  const start = (day: string) => new Date(`${day}T00:00:00Z`);
  const end = days.to ? new Date(start(days.to).getTime() + 86_400_000) : undefined;
  return {
    ...(days.from ? { from: start(days.from) } : {}),
    ...(end && end.getUTCFullYear() <= 9999 ? { to: end } : {}),
  };
}

/** The caller's verified revenue per skill and day, oldest first, within [from, to) when given. */
export async function revenueLedger(ctx: ServiceContext, creatorId: string, range: { from?: Date; to?: Date } = {}): Promise<RevenueRow[]> {
  const day = sql<string>`to_char(${paymentVerifications.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await ctx.db
    .select({
      day,
      skill: skills.slug,
      scheme: paymentVerifications.scheme,
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
    .groupBy(day, skills.slug, paymentVerifications.scheme);
  const ledger = new Map<string, RevenueRow>();
  const rowOf = (day: string, skill: string) => {
    const key = `${day}\n${skill}`;
    let row = ledger.get(key);
    if (!row) {
      row = { day, skill, ...noFigures() };
      ledger.set(key, row);
    }
    return row;
  };
  for (const r of rows) {
    const row = rowOf(r.day, r.skill);
    row.paidCalls += Number(r.paidCalls);
    row.revenueAtomic += BigInt(r.revenueAtomic);
    // Checks decided before the scheme was kept are transfers of the price: exact.
    if (r.scheme === 'upto') row.uptoAtomic += BigInt(r.revenueAtomic);
    else row.exactAtomic += BigInt(r.revenueAtomic);
  }
  for (const c of await channelLedger(ctx.db, creatorId, range)) {
    const row = rowOf(c.day, c.skill);
    row.paidCalls += c.claimedCalls;
    row.revenueAtomic += c.claimedAtomic;
    row.channelClaimedAtomic += c.claimedAtomic;
    row.channelSettledAtomic += c.settledAtomic;
    row.channelUnclaimedAtomic += c.earnedAtomic;
  }
  return [...ledger.values()].sort((a, b) =>
    a.day !== b.day ? (a.day < b.day ? -1 : 1) : a.skill < b.skill ? -1 : a.skill > b.skill ? 1 : 0,
  );
}

/**
 * The ledger as CSV (RFC 4180): a header, one line per skill and day, a total line. Revenue counts
 * payments in the registry's token only, so `revenue_usdc` has its `decimals`, all of them.
 */
export function revenueCsv(rows: readonly RevenueRow[], decimals: number): string {
  const quote = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  const lines = [
    'date,skill,paid_calls,revenue_usdc,revenue_atomic,exact_atomic,upto_atomic,channel_claimed_atomic,channel_settled_atomic,channel_unclaimed_atomic',
  ];
  const figures = (r: Omit<RevenueRow, 'day' | 'skill'>) => [
    r.paidCalls,
    fixedDecimals(r.revenueAtomic, decimals),
    r.revenueAtomic,
    r.exactAtomic,
    r.uptoAtomic,
    r.channelClaimedAtomic,
    r.channelSettledAtomic,
    r.channelUnclaimedAtomic,
  ];
  for (const r of rows) lines.push([r.day, quote(r.skill), ...figures(r)].join(','));
  const total = rows.reduce(
    (t, r) => ({
      paidCalls: t.paidCalls + r.paidCalls,
      revenueAtomic: t.revenueAtomic + r.revenueAtomic,
      exactAtomic: t.exactAtomic + r.exactAtomic,
      uptoAtomic: t.uptoAtomic + r.uptoAtomic,
      channelClaimedAtomic: t.channelClaimedAtomic + r.channelClaimedAtomic,
      channelSettledAtomic: t.channelSettledAtomic + r.channelSettledAtomic,
      channelUnclaimedAtomic: t.channelUnclaimedAtomic + r.channelUnclaimedAtomic,
    }),
    noFigures(),
  );
  lines.push(['total', '', ...figures(total)].join(','));
  return `${lines.join('\r\n')}\r\n`;
}
