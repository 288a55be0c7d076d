/**
 * One price: the skill server asks what the skill's listing says, and gives its free trial and
 * volume prices. The registry keeps a price, trial or tiers its owner edited (dashboard,
 * `updateSkill`) over the module's on re-registration, and `serve()` reads
 * the listings at start (the registration's answer) and then every few seconds, so an edit reaches
 * the 402 terms within one interval and a restart never undoes it.
 */
import type { RegistryClient } from '../registry/client';
import { errorText, type CreatorLogger } from './logger';
import type { SkillRequestHandler } from './handler';
import type { TrialTerms } from '../registry/contract/skills';
import type { Period } from './plans/period';

/** How often `serve()` reads its listings' prices (and trials and volume prices) by default, ms. */
export const DEFAULT_LISTING_REFRESH_MS = 2_000;

/** Sets a skill's price to its listing's; logs when that changes what the skill asks. */
export function applyListingPrice(app: SkillRequestHandler, name: string, price: string, logger: CreatorLogger): void {
  try {
    if (app.setPrice(name, price)) logger.info(`"${name}" now asks ${price}: the price of its listing (change it in the dashboard)`);
  } catch (error) {
    logger.warn(`the listing of "${name}" has a price this server cannot ask (${price}): ${errorText(error)}`);
  }
}

/** A listing's free trial and volume prices, as the registry answers them (`SkillView`); null: none. */
export interface ListingPlans {
  trial: TrialTerms | null;
  tiers: { period: Period; steps: readonly { after: number; price: string }[] } | null;
}

/** Sets a skill's free trial and volume prices to its listing's; logs when that changes what the skill gives. */
export function applyListingPlans(app: SkillRequestHandler, name: string, listing: ListingPlans, logger: CreatorLogger): void {
  const trial = listing.trial ?? undefined;
  const tiers = listing.tiers
    ? { period: listing.tiers.period, steps: listing.tiers.steps.map((step) => ({ after: step.after, price: step.price })) }
    : undefined;
  try {
    if (app.setPlans(name, { trial, tiers }))
      logger.info(
        `"${name}" now gives ${describePlans(listing)}: the trial and volume prices of its listing (change them in the dashboard)`,
      );
  } catch (error) {
    logger.warn(`the listing of "${name}" has a trial or volume prices this server cannot give: ${errorText(error)}`);
  }
}

const describePlans = ({ trial, tiers }: ListingPlans) =>
  [
    trial ? `${trial.calls} free call(s) per ${trial.period}` : 'no free trial',
    tiers ? `volume prices ${tiers.steps.map((s) => `${s.price} after ${s.after}`).join(', ')} per ${tiers.period}` : 'no volume prices',
  ].join(' and ');

/**
 * Reads the creator's own listings every `intervalMs` and applies the price of each listed skill
 * this server has (by name). A failed read is retried at the next tick, with one warning per outage.
 */
export function followListingPrices(options: {
  client: RegistryClient;
  app: () => SkillRequestHandler;
  intervalMs: number;
  logger: CreatorLogger;
}): { stop(): void } {
  let failing = false;
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const app = options.app();
      for (const listing of await options.client.ownSkills()) {
        if (!app.names.includes(listing.name)) continue;
        applyListingPrice(app, listing.name, listing.price, options.logger);
        applyListingPlans(app, listing.name, listing, options.logger);
      }
      failing = false;
    } catch (error) {
      if (!failing) options.logger.warn(`cannot read the listings' prices: ${errorText(error)} (retrying)`);
      failing = true;
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), options.intervalMs);
  (timer as { unref?: () => void }).unref?.();
  return { stop: () => clearInterval(timer) };
}
