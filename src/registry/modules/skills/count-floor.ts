/**
 * What a call must pay to count as a paid call of a skill: its price, and for a day after a price
 * cut, the price before the cut. A cut then cannot buy counts cheaply (cut the price, pay a few
 * calls from one's own other wallet, put the price back): calls at the cut price still sell and
 * earn, and count as paid calls once the cut has stood for {@link PRICE_CUT_HOLD_SECONDS}.
 */

/** How long a price cut keeps the price before it as the least a call must pay to count. */
const PRICE_CUT_HOLD_SECONDS = 24 * 3600;

/** The columns of a skill that say what a call must pay to count. */
export interface CountFloor {
  priceAtomic: bigint;
  countFloorAtomic: bigint | null;
  countFloorUntil: Date | null;
}

/** The least a call at `at` must pay to count (micro-USDC). */
export function countablePrice(skill: CountFloor, at: Date): bigint {
  const floor =
    skill.countFloorAtomic !== null && skill.countFloorUntil !== null && at < skill.countFloorUntil ? skill.countFloorAtomic : 0n;
  return floor > skill.priceAtomic ? floor : skill.priceAtomic;
}

/**
 * The floor columns after the price changes from `skill.priceAtomic` to `next` at `now`: a cut
 * holds the higher of the price before it and a floor still standing, for a day from now; a rise
 * changes nothing (the price itself is then at least as high).
 */
export function floorAfterPriceChange(
  skill: CountFloor,
  next: bigint,
  now: Date,
): Pick<CountFloor, 'countFloorAtomic' | 'countFloorUntil'> | undefined {
  if (next >= skill.priceAtomic) return undefined;
  const floor = countablePrice(skill, now);
  return { countFloorAtomic: floor, countFloorUntil: new Date(now.getTime() + PRICE_CUT_HOLD_SECONDS * 1000) };
}
