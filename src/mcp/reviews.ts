/**
 * Reviews as the registry publishes them (`GET /skills/:slug/reviews`: verified buyers' scores
 * 1–5, newest first). A registry without that path (404, 405 or 501) is reported as "none
 * offered", never invented.
 */
import type { SkillMarket } from 'skill-market/client';
import { RegistryError, type ReviewView } from 'skill-market/registry';

export type Reviews = { available: true; items: ReviewView[] } | { available: false; reason: string };

export async function readReviews(market: SkillMarket, slug: string): Promise<Reviews> {
  try {
    return { available: true, items: (await market.reviews(slug)).reviews };
  } catch (error) {
    if (error instanceof RegistryError && [404, 405, 501].includes(error.status ?? 0)) {
      return { available: false, reason: `this registry has no reviews endpoint: GET /skills/${slug}/reviews answered ${error.status}` };
    }
    throw error;
  }
}
