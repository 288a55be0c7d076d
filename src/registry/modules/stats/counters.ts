/**
 * A skill's counters (skill_stats) and daily series (skill_daily): this file is the only writer of
 * both. Other modules count through these functions inside their own transaction (they pass its
 * `tx`), so a count commits or rolls back with the event it counts.
 */
import { eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../../../db';
import { skillDaily, skillStats } from '../../../db/schema';

/** A transaction of the registry's database. */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

export const dayOf = (date: Date) => date.toISOString().slice(0, 10);

async function bumpDaily(tx: Tx, skillId: string, at: Date, delta: { views?: number; calls?: number; revenue?: bigint }) {
  const views = delta.views ?? 0;
  const calls = delta.calls ?? 0;
  const revenue = delta.revenue ?? 0n;
  await tx
    .insert(skillDaily)
    .values({ skillId, day: dayOf(at), views, calls, revenue })
    .onConflictDoUpdate({
      target: [skillDaily.skillId, skillDaily.day],
      set: {
        views: sql`${skillDaily.views} + ${views}`,
        calls: sql`${skillDaily.calls} + ${calls}`,
        revenue: sql`${skillDaily.revenue} + ${revenue}`,
      },
    });
}

/** Zeroed counters for a newly listed skill. */
export async function createSkillStats(tx: Tx, skillId: string): Promise<void> {
  await tx.insert(skillStats).values({ skillId });
}

/** One counted view (already deduplicated by the caller). */
export async function countView(tx: Tx, skillId: string, at: Date): Promise<void> {
  await tx
    .update(skillStats)
    .set({ viewCount: sql`${skillStats.viewCount} + 1`, lastViewedAt: at })
    .where(eq(skillStats.skillId, skillId));
  await bumpDaily(tx, skillId, at, { views: 1 });
}

/**
 * Calls without a payment to verify, `calls` per skill id, counted at once: one statement per
 * table however many skills (a batch of call records).
 */
export async function countUnpaidCalls(tx: Tx, calls: ReadonlyMap<string, number>, at: Date): Promise<void> {
  const entries = [...calls].filter(([, n]) => n > 0);
  if (entries.length === 0) return;
  const added = sql.join(
    entries.map(([skillId, n]) => sql`when ${skillId}::uuid then ${n}::integer`),
    sql` `,
  );
  await tx
    .update(skillStats)
    .set({ callCount: sql`${skillStats.callCount} + (case ${skillStats.skillId} ${added} else 0 end)`, lastCalledAt: at })
    .where(
      inArray(
        skillStats.skillId,
        entries.map(([skillId]) => skillId),
      ),
    );
  await tx
    .insert(skillDaily)
    .values(entries.map(([skillId, calls]) => ({ skillId, day: dayOf(at), calls })))
    .onConflictDoUpdate({
      target: [skillDaily.skillId, skillDaily.day],
      set: { calls: sql`${skillDaily.calls} + excluded.calls` },
    });
}

/**
 * One paid call whose payment (`amount`, the token's atomic units) is verified, counted on the day it was made;
 * `uncount` takes back one counted before (its payment turned out to be another skill's).
 */
export async function countPaidCall(tx: Tx, skillId: string, amount: bigint, calledAt: Date, uncount = false): Promise<void> {
  const sign = uncount ? -1 : 1;
  const revenue = uncount ? -amount : amount;
  await addPaidCalls(tx, skillId, sign, revenue, uncount ? undefined : calledAt);
  await bumpDaily(tx, skillId, calledAt, { calls: sign, revenue });
}

/** Adds `calls` paid calls (negative: taken back) and their revenue to a skill's counters; `calledAt` moves its last call. */
async function addPaidCalls(tx: Tx, skillId: string, calls: number, revenue: bigint, calledAt?: Date): Promise<void> {
  await tx
    .update(skillStats)
    .set({
      callCount: sql`${skillStats.callCount} + ${calls}`,
      paidCallCount: sql`${skillStats.paidCallCount} + ${calls}`,
      totalRevenue: sql`${skillStats.totalRevenue} + ${revenue}`,
      ...(calledAt ? { lastCalledAt: sql`greatest(${skillStats.lastCalledAt}, ${calledAt.toISOString()}::timestamptz)` } : {}),
    })
    .where(eq(skillStats.skillId, skillId));
}

/**
 * Paid calls counted together (a channel's claimed records): the same sums as one
 * {@link countPaidCall} per call, in one statement per skill and one per skill and day, skills in
 * one order so concurrent batches take their row locks alike.
 */
export async function countPaidCalls(tx: Tx, calls: readonly { skillId: string; amount: bigint; calledAt: Date }[]): Promise<void> {
  const bySkill = new Map<string, { calls: number; revenue: bigint; last: Date; days: Map<string, { calls: number; revenue: bigint }> }>();
  for (const { skillId, amount, calledAt } of calls) {
    const skill = bySkill.get(skillId) ?? { calls: 0, revenue: 0n, last: calledAt, days: new Map() };
    skill.calls += 1;
    skill.revenue += amount;
    if (calledAt > skill.last) skill.last = calledAt;
    const day = skill.days.get(dayOf(calledAt)) ?? { calls: 0, revenue: 0n };
    day.calls += 1;
    day.revenue += amount;
    skill.days.set(dayOf(calledAt), day);
    bySkill.set(skillId, skill);
  }
  for (const skillId of [...bySkill.keys()].sort()) {
    const { calls: n, revenue, last, days } = bySkill.get(skillId)!;
    await addPaidCalls(tx, skillId, n, revenue, last);
    await tx
      .insert(skillDaily)
      .values(
        [...days].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, d]) => ({ skillId, day, views: 0, calls: d.calls, revenue: d.revenue })),
      )
      .onConflictDoUpdate({
        target: [skillDaily.skillId, skillDaily.day],
        set: {
          calls: sql`${skillDaily.calls} + excluded.calls`,
          revenue: sql`${skillDaily.revenue} + excluded.revenue`,
        },
      });
  }
}

/** A new review's score (`previousScore` undefined), or a changed one. */
export async function countReview(tx: Tx, skillId: string, score: number, previousScore?: number): Promise<void> {
  await tx
    .update(skillStats)
    .set(
      previousScore === undefined
        ? { reviewCount: sql`${skillStats.reviewCount} + 1`, ratingSum: sql`${skillStats.ratingSum} + ${score}` }
        : { ratingSum: sql`${skillStats.ratingSum} + ${score - previousScore}` },
    )
    .where(eq(skillStats.skillId, skillId));
}

/** Adds `delta` (1, -1 or 0) to the favorites; answers the count after the change. */
export async function countFavorite(tx: Tx, skillId: string, delta: number): Promise<number> {
  const [stats] = await tx
    .update(skillStats)
    .set({ favoriteCount: sql`${skillStats.favoriteCount} + ${delta}` })
    .where(eq(skillStats.skillId, skillId))
    .returning({ favoriteCount: skillStats.favoriteCount });
  return stats?.favoriteCount ?? 0;
}
