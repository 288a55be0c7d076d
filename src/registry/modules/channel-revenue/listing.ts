/**
 * What channel calls add up to, for analytics, the payout ledger and the dashboards: per skill the
 * calls earned (reported, not yet claimed on chain), claimed (counted as revenue) and settled (a
 * sweep paid them out to the receiver); per channel its on-chain state as last read.
 */
import { and, desc, eq, gte, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { ChannelView } from 'skill-market/registry';
import type { Database } from '../../../db';
import { larger } from '../../lib/amounts';
import { channelCalls, paymentChannels, skills, usageRecords } from '../../../db/schema';

export interface ChannelTotals {
  earnedCalls: number;
  earnedAtomic: bigint;
  claimedCalls: number;
  claimedAtomic: bigint;
  settledAtomic: bigint;
  refusedCalls: number;
}

const settled = sql`${channelCalls.status} = 'counted' and ${channelCalls.cumulative} <= ${paymentChannels.settledClaimed}`;
const sums = {
  earnedCalls: sql<number>`(count(*) filter (where ${channelCalls.status} = 'earned'))::int`,
  earnedAtomic: sql<string>`coalesce(sum(${channelCalls.amount}) filter (where ${channelCalls.status} = 'earned'), 0)::text`,
  claimedCalls: sql<number>`(count(*) filter (where ${channelCalls.status} = 'counted'))::int`,
  claimedAtomic: sql<string>`coalesce(sum(${channelCalls.amount}) filter (where ${channelCalls.status} = 'counted'), 0)::text`,
  settledAtomic: sql<string>`coalesce(sum(${channelCalls.amount}) filter (where ${settled}), 0)::text`,
  refusedCalls: sql<number>`(count(*) filter (where ${channelCalls.status} = 'refused'))::int`,
};
const totalsOf = (r: { [K in keyof typeof sums]: string | number }): ChannelTotals => ({
  earnedCalls: Number(r.earnedCalls),
  earnedAtomic: BigInt(r.earnedAtomic),
  claimedCalls: Number(r.claimedCalls),
  claimedAtomic: BigInt(r.claimedAtomic),
  settledAtomic: BigInt(r.settledAtomic),
  refusedCalls: Number(r.refusedCalls),
});

/** A skill's channel calls, added up (zeros without any). */
export async function channelTotals(db: Database, skillId: string): Promise<ChannelTotals> {
  const [row] = await db
    .select(sums)
    .from(channelCalls)
    .innerJoin(paymentChannels, eq(paymentChannels.channelId, channelCalls.channelId))
    .where(eq(channelCalls.skillId, skillId));
  return totalsOf(row ?? { earnedCalls: 0, earnedAtomic: '0', claimedCalls: 0, claimedAtomic: '0', settledAtomic: '0', refusedCalls: 0 });
}

export interface ChannelLedgerRow extends ChannelTotals {
  day: string;
  skill: string;
}

/** A creator's channel calls per skill and UTC day reported, within [from, to) when given. */
export async function channelLedger(db: Database, creatorId: string, range: { from?: Date; to?: Date } = {}): Promise<ChannelLedgerRow[]> {
  const day = sql<string>`to_char(${channelCalls.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await db
    .select({ day, skill: skills.slug, ...sums })
    .from(channelCalls)
    .innerJoin(paymentChannels, eq(paymentChannels.channelId, channelCalls.channelId))
    .innerJoin(skills, eq(skills.id, channelCalls.skillId))
    .where(
      and(
        eq(skills.creatorId, creatorId),
        range.from ? gte(channelCalls.createdAt, range.from) : undefined,
        range.to ? lt(channelCalls.createdAt, range.to) : undefined,
      ),
    )
    .groupBy(day, skills.slug);
  return rows.map((r) => ({ day: r.day, skill: r.skill, ...totalsOf(r) }));
}

/**
 * Channels seen by the registry, newest first, up to `limit`: those of the creator's skills
 * (`creatorId`), or those any of the wallets `payers` pays from (by its config on chain) and, not
 * yet read on chain, those the usage records of the payer's account (`userId`) name, with what
 * their calls add up to.
 */
export async function listChannels(
  db: Database,
  who: { creatorId: string } | { payers: readonly string[]; userId: string },
  limit: number,
): Promise<ChannelView[]> {
  const mine =
    'creatorId' in who
      ? inArray(
          paymentChannels.channelId,
          db
            .select({ id: channelCalls.channelId })
            .from(channelCalls)
            .innerJoin(skills, eq(skills.id, channelCalls.skillId))
            .where(eq(skills.creatorId, who.creatorId)),
        )
      : or(
          inArray(
            sql`lower(${paymentChannels.payer})`,
            who.payers.map((p) => p.toLowerCase()),
          ),
          and(
            isNull(paymentChannels.payer),
            inArray(
              paymentChannels.channelId,
              db
                .select({ id: usageRecords.channelId })
                .from(usageRecords)
                .where(and(eq(usageRecords.userId, who.userId), isNotNull(usageRecords.channelId))),
            ),
          ),
        );
  const channels = await db.select().from(paymentChannels).where(mine).orderBy(desc(paymentChannels.createdAt)).limit(limit);
  if (channels.length === 0) return [];
  const rows = await db
    .select({ channelId: channelCalls.channelId, skill: skills.slug, ...sums })
    .from(channelCalls)
    .innerJoin(paymentChannels, eq(paymentChannels.channelId, channelCalls.channelId))
    .innerJoin(skills, eq(skills.id, channelCalls.skillId))
    .where(
      and(
        inArray(
          channelCalls.channelId,
          channels.map((c) => c.channelId),
        ),
        'creatorId' in who ? eq(skills.creatorId, who.creatorId) : undefined,
      ),
    )
    .groupBy(channelCalls.channelId, skills.slug);
  return channels.map((c) => {
    const own = rows.filter((r) => r.channelId === c.channelId);
    const t = own.map(totalsOf).reduce(
      (a, b) => ({
        earnedCalls: a.earnedCalls + b.earnedCalls,
        earnedAtomic: a.earnedAtomic + b.earnedAtomic,
        claimedCalls: a.claimedCalls + b.claimedCalls,
        claimedAtomic: a.claimedAtomic + b.claimedAtomic,
        settledAtomic: a.settledAtomic + b.settledAtomic,
        refusedCalls: a.refusedCalls + b.refusedCalls,
      }),
      { earnedCalls: 0, earnedAtomic: 0n, claimedCalls: 0, claimedAtomic: 0n, settledAtomic: 0n, refusedCalls: 0 },
    );
    const state: ChannelView['state'] =
      c.payer === null
        ? 'unknown'
        : t.earnedCalls > 0
          ? 'unclaimed'
          : c.totalClaimed > c.settledClaimed
            ? 'claimed'
            : c.totalClaimed > 0n
              ? 'settled'
              : 'open';
    const charged = t.earnedAtomic + t.claimedAtomic;
    // The payer's: what the channel holds that nobody charged (nor claimed, a claim being a charge the chain saw).
    const spent = larger(charged, c.totalClaimed);
    const payerAtomic = c.balance === null ? null : c.balance > spent ? c.balance - spent : 0n;
    return {
      channelId: c.channelId,
      network: c.network,
      skills: own.map((r) => r.skill).sort(),
      payer: c.payer,
      receiver: c.receiver,
      state,
      balanceAtomic: c.balance?.toString() ?? null,
      chargedAtomic: charged.toString(),
      claimedAtomic: c.totalClaimed.toString(),
      settledAtomic: c.settledClaimed.toString(),
      earnedCalls: t.earnedCalls,
      earnedAtomic: t.earnedAtomic.toString(),
      countedCalls: t.claimedCalls,
      countedAtomic: t.claimedAtomic.toString(),
      refusedCalls: t.refusedCalls,
      payerAtomic: payerAtomic?.toString() ?? null,
      withdrawingAtomic: c.withdrawAmount.toString(),
      withdrawInitiatedAt: c.withdrawInitiatedAt?.toISOString() ?? null,
      checkedAt: c.checkedAt?.toISOString() ?? null,
    };
  });
}
