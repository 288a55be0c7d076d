/**
 * Volume prices in a skill's analytics: which tier priced each paid call, and the calls and revenue
 * per tier.
 *
 * The skill server knows the tier (it chose the payer's tier price) and reports it with the call
 * record as the step's `after` (0: the base price). The registry cannot see the payer's count, so
 * it believes the tier only where the listing allows the call's amount at that tier:
 * - the tier is the base (0) or a step the skill lists now (an edit since drops older labels);
 * - a transfer of the price (`exact`: the record names its authorization nonce) must be exactly
 *   that tier's price — the base is the price, or the price before a cut within the day;
 * - a metered charge (`upto`, or a call over a payment channel) is at most that tier's price, as
 *   the handler may charge less than the price it was offered at.
 * A tier it cannot believe is stored as unknown (null), never a reason to refuse the call: the
 * payment is what counts, and the label only splits it. Revenue per tier is what the chain shows
 * (verified transfers, claimed channel calls), exactly as the totals.
 */
import type { CallBody } from 'skill-market/registry';
import { rescaleAtomic, USDC_DECIMALS } from 'skill-market/x402';
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { Database } from '../../../db';
import { channelCalls, paymentVerifications, skillCalls } from '../../../db/schema';
import { type CountFloor, countablePrice } from '../skills';

/** What the tier check needs of a skill: its prices (micro-USDC) and volume price steps. */
export interface TieredSkill extends CountFloor {
  tiers: { steps: { after: number; priceAtomic: string }[] } | null;
}

/**
 * The tier a call record names, if the listing allows its amount at that tier (see above);
 * null otherwise. `amount` is the record's in the token's atomic units (`decimals`).
 */
export function believedTier(call: CallBody, skill: TieredSkill, amount: bigint | null, decimals: number, now: Date): number | null {
  if (call.tier === undefined || !skill.tiers || amount === null || amount <= 0n) return null;
  const step = call.tier === 0 ? undefined : skill.tiers.steps.find((s) => s.after === call.tier);
  if (call.tier !== 0 && !step) return null;
  const inToken = (micro: bigint) => rescaleAtomic(micro, USDC_DECIMALS, decimals);
  const exact = call.paymentRef !== undefined && call.paymentNonce !== undefined;
  if (step) {
    const price = inToken(BigInt(step.priceAtomic));
    if (price === undefined) return null;
    return (exact ? amount === price : amount <= price) ? call.tier : null;
  }
  const prices = [skill.priceAtomic, countablePrice(skill, now)].map(inToken);
  const fits = exact ? prices.some((p) => p === amount) : prices.some((p) => p !== undefined && amount <= p);
  return fits ? 0 : null;
}

/** Paid calls and revenue (the token's atomic units) of one tier; `after` null: the tier is not known. */
export interface TierFigures {
  after: number | null;
  calls: number;
  revenueAtomic: bigint;
}

/**
 * A skill's paid calls and revenue per tier, base first then by `after`, unknown last: verified
 * transfers (the check that counted each) and channel calls claimed on chain.
 */
export async function tierSplit(db: Database, skillId: string): Promise<TierFigures[]> {
  const transfers = await db
    .select({
      after: skillCalls.tierAfter,
      calls: sql<number>`count(*)::int`,
      revenue: sql<string>`coalesce(sum(${paymentVerifications.amount}), 0)::text`,
    })
    .from(skillCalls)
    .innerJoin(paymentVerifications, eq(paymentVerifications.id, skillCalls.paymentId))
    .where(
      and(
        eq(skillCalls.skillId, skillId),
        eq(paymentVerifications.status, 'verified'),
        isNotNull(paymentVerifications.logIndex),
        eq(paymentVerifications.skillId, skillId),
      ),
    )
    .groupBy(skillCalls.tierAfter);
  const channels = await db
    .select({
      after: channelCalls.tierAfter,
      calls: sql<number>`count(*)::int`,
      revenue: sql<string>`coalesce(sum(${channelCalls.amount}), 0)::text`,
    })
    .from(channelCalls)
    .where(and(eq(channelCalls.skillId, skillId), eq(channelCalls.status, 'counted')))
    .groupBy(channelCalls.tierAfter);
  const split = new Map<number | null, TierFigures>();
  for (const r of [...transfers, ...channels]) {
    const row = split.get(r.after) ?? { after: r.after, calls: 0, revenueAtomic: 0n };
    row.calls += Number(r.calls);
    row.revenueAtomic += BigInt(r.revenue);
    split.set(r.after, row);
  }
  return [...split.values()].sort((a, b) => (a.after ?? Number.POSITIVE_INFINITY) - (b.after ?? Number.POSITIVE_INFINITY));
}
