/**
 * One price: the skill server asks what the skill's listing says. The registry keeps a price its
 * owner edited (dashboard, `updateSkill`) over the module's on re-registration, and `serve()` reads
 * the listings at start (the registration's answer) and then every few seconds, so an edit reaches
 * the 402 terms within one interval and a restart never undoes it.
 */
import type { RegistryClient } from '../registry/client';
import { errorText, type CreatorLogger } from './logger';
import type { SkillRequestHandler } from './handler';

/** How often `serve()` reads its listings' prices by default, ms. */
export const DEFAULT_LISTING_REFRESH_MS = 2_000;

/** Sets a skill's price to its listing's; logs when that changes what the skill asks. */
export function applyListingPrice(app: SkillRequestHandler, name: string, price: string, logger: CreatorLogger): void {
  try {
    if (app.setPrice(name, price)) logger.info(`"${name}" now asks ${price}: the price of its listing (change it in the dashboard)`);
  } catch (error) {
    logger.warn(`the listing of "${name}" has a price this server cannot ask (${price}): ${errorText(error)}`);
  }
}

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
        if (app.names.includes(listing.name)) applyListingPrice(app, listing.name, listing.price, options.logger);
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
