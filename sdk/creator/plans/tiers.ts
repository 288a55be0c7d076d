/**
 * Volume prices: a skill defined with `tiers` charges a payer less once it paid for `after` calls
 * in the period. The server counts each payer's paid calls per skill and period in the plans store
 * (durably, as trial calls are counted), and a paid call's charge is the payer's tier price: on a
 * payment channel the voucher's charge, on `upto` the settlement (both at most the signed maximum,
 * the skill's price). An `exact` payment pays what its 402 asked: the tier price when the payer
 * identified itself with the 402's sign-in, else the skill's price.
 */
import { parsePrice } from '../../x402/index';
import type { BaseRoute, SettledCall } from '../scheme';
import { periodEnd } from './period';
import type { TrialStore } from './store';

export interface Tiers {
  /** What `payer` pays for its next call of the route: its tier price, or the route's amount. */
  amountFor(route: BaseRoute, payer: string): Promise<bigint>;
  /** Counts a paid call of a tiered skill for its payer. */
  count(call: SettledCall, route: BaseRoute | undefined): void;
}

/** The tier `amount` is the price of (`SettledCall.tier`): its step's `after`, else 0; undefined without volume prices. */
export function tierOf(skill: BaseRoute['skill'], amount: bigint, decimals: number): number | undefined {
  const tiers = skill.tiers;
  if (!tiers) return undefined;
  return tiers.steps.find((step) => parsePrice(step.price, decimals) === amount)?.after ?? 0;
}

export function createTiers(options: { store: TrialStore; now: () => number; warn: (message: string) => void }): Tiers {
  const { store, now } = options;
  return {
    async amountFor(route, payer) {
      const tiers = route.skill.tiers;
      if (!tiers) return route.amount;
      const paid = await store.paidCalls(route.name, payer.toLowerCase(), periodEnd(tiers.period, now()));
      let amount = route.amount;
      for (const step of tiers.steps) {
        const price = parsePrice(step.price, route.terms.asset.decimals);
        if (paid >= step.after && price < amount) amount = price;
      }
      return amount;
    },
    count(call, route) {
      const tiers = route?.skill.tiers;
      if (!tiers || call.scheme === 'trial') return;
      store
        .countPaid(call.skill, call.payer.toLowerCase(), periodEnd(tiers.period, now()))
        .catch((error: unknown) => options.warn(`a paid call of ${call.skill} was not counted for its volume price: ${String(error)}`));
    },
  };
}
