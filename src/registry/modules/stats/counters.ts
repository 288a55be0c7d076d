/**
 * A skill's counters (skill_stats) and daily series (skill_daily): this file is the only writer of
 * both. Other modules count through these functions inside their own transaction (they pass its
 * `tx`), so a count commits or rolls back with the event it counts.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../../../db';
import { skillBuyers, skillDaily, skills, skillStats } from '../../../db/schema';

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

/** Zeroed counters for a newly listed skill, with its server's service quality (per mille). */
export async function createSkillStats(tx: Tx, skillId: string, serviceQuality: number): Promise<void> {
  await tx.insert(skillStats).values({ skillId, serviceQuality });
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
 * Calls counted at once, `calls` per skill id: those without a payment to verify, and those paid
 * over a payment channel (their charge is earned at once; it counts as a paid call and revenue at
 * the claim, {@link countClaimedCalls}). One statement per table however many skills (a batch of
 * call records).
 */
export async function countCalls(tx: Tx, calls: ReadonlyMap<string, number>, at: Date): Promise<void> {
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

/** Free trial calls of skills, by skill: their own counter, apart from calls, paid calls and revenue. */
export async function countTrialCalls(tx: Tx, calls: ReadonlyMap<string, number>): Promise<void> {
  for (const [skillId, n] of calls) {
    if (n > 0)
      await tx
        .update(skillStats)
        .set({ trialCallCount: sql`${skillStats.trialCallCount} + ${n}` })
        .where(eq(skillStats.skillId, skillId));
  }
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

/** Per skill (in one order, so concurrent batches take their row locks alike) and UTC day: how many calls and what they charged. */
function bySkillAndDay(calls: readonly { skillId: string; amount?: bigint; calledAt: Date }[]) {
  const bySkill = new Map<string, { calls: number; revenue: bigint; days: Map<string, { calls: number; revenue: bigint }> }>();
  for (const { skillId, amount = 0n, calledAt } of calls) {
    const skill = bySkill.get(skillId) ?? { calls: 0, revenue: 0n, days: new Map() };
    skill.calls += 1;
    skill.revenue += amount;
    const day = skill.days.get(dayOf(calledAt)) ?? { calls: 0, revenue: 0n };
    day.calls += 1;
    day.revenue += amount;
    skill.days.set(dayOf(calledAt), day);
    bySkill.set(skillId, skill);
  }
  return [...bySkill.keys()].sort().map((skillId) => {
    const { calls: n, revenue, days } = bySkill.get(skillId)!;
    return { skillId, calls: n, revenue, days: [...days].sort(([a], [b]) => (a < b ? -1 : 1)) };
  });
}

/**
 * Calls already counted as calls (by {@link countCalls}, when reported) whose payment is now
 * verified: a channel's records its receiver claimed on chain. They add paid calls and revenue,
 * the revenue on the day each call was made; one statement per skill and one per skill and day.
 */
export async function countClaimedCalls(tx: Tx, calls: readonly { skillId: string; amount: bigint; calledAt: Date }[]): Promise<void> {
  for (const { skillId, calls: n, revenue, days } of bySkillAndDay(calls)) {
    await tx
      .update(skillStats)
      .set({ paidCallCount: sql`${skillStats.paidCallCount} + ${n}`, totalRevenue: sql`${skillStats.totalRevenue} + ${revenue}` })
      .where(eq(skillStats.skillId, skillId));
    await tx
      .insert(skillDaily)
      .values(days.map(([day, d]) => ({ skillId, day, views: 0, calls: 0, revenue: d.revenue })))
      .onConflictDoUpdate({
        target: [skillDaily.skillId, skillDaily.day],
        set: { revenue: sql`${skillDaily.revenue} + excluded.revenue` },
      });
  }
}

/**
 * Takes back calls counted by {@link countCalls} that turned out not to be calls of the skill: a
 * channel's records the registry refused (never claimed, another receiver, an overlapping charge),
 * each from the day it was made.
 */
export async function uncountCalls(tx: Tx, calls: readonly { skillId: string; calledAt: Date }[]): Promise<void> {
  for (const { skillId, calls: n, days } of bySkillAndDay(calls)) {
    await tx
      .update(skillStats)
      .set({ callCount: sql`greatest(${skillStats.callCount} - ${n}, 0)` })
      .where(eq(skillStats.skillId, skillId));
    for (const [day, d] of days) {
      await tx
        .update(skillDaily)
        .set({ calls: sql`greatest(${skillDaily.calls} - ${d.calls}, 0)` })
        .where(and(eq(skillDaily.skillId, skillId), eq(skillDaily.day, day)));
    }
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

/**
 * `calls` verified paid calls of `skillId` from wallet `payer` (negative: taken back): the skill's
 * buyers (distinct paying wallets) and repeat buyers (those with more than one paid call) follow.
 * What `sort=popular` ranks by first, so that washing from one wallet buys one buyer.
 */
export async function countBuyer(tx: Tx, skillId: string, payer: string, calls: number): Promise<void> {
  if (calls === 0) return;
  const wallet = payer.toLowerCase();
  const where = and(eq(skillBuyers.skillId, skillId), eq(skillBuyers.payer, wallet));
  let was: number;
  let now: number;
  if (calls > 0) {
    // One statement: the row made or added to under its lock (concurrent first payments of one wallet meet on it).
    const [row] = await tx
      .insert(skillBuyers)
      .values({ skillId, payer: wallet, paidCalls: calls })
      .onConflictDoUpdate({
        target: [skillBuyers.skillId, skillBuyers.payer],
        set: { paidCalls: sql`${skillBuyers.paidCalls} + ${calls}` },
      })
      .returning({ paidCalls: skillBuyers.paidCalls });
    now = row!.paidCalls;
    was = now - calls;
  } else {
    const [before] = await tx.select({ paidCalls: skillBuyers.paidCalls }).from(skillBuyers).where(where).for('update');
    if (!before) return;
    was = before.paidCalls;
    now = Math.max(was + calls, 0);
    if (now === 0) await tx.delete(skillBuyers).where(where);
    else await tx.update(skillBuyers).set({ paidCalls: now }).where(where);
  }
  const buyers = (now > 0 ? 1 : 0) - (was > 0 ? 1 : 0);
  const repeat = (now > 1 ? 1 : 0) - (was > 1 ? 1 : 0);
  if (buyers === 0 && repeat === 0) return;
  await tx
    .update(skillStats)
    .set({ buyerCount: sql`${skillStats.buyerCount} + ${buyers}`, repeatBuyerCount: sql`${skillStats.repeatBuyerCount} + ${repeat}` })
    .where(eq(skillStats.skillId, skillId));
}

/**
 * The service quality (per mille) of every skill served at `serverUrl`, as its last health probe
 * left it: one statement, rows already at that quality untouched.
 */
export async function setServiceQuality(tx: Tx, serverUrl: string, quality: number): Promise<void> {
  await tx
    .update(skillStats)
    .set({ serviceQuality: quality })
    .where(
      and(
        sql`${skillStats.skillId} in (select ${skills.id} from ${skills} where ${skills.serverUrl} = ${serverUrl})`,
        sql`${skillStats.serviceQuality} <> ${quality}`,
      ),
    );
}
