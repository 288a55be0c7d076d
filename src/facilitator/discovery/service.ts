import type { FacilitatorService } from '../service';
import type { BazaarOutcome, DiscoveryCatalogue } from './catalogue';

/** The bazaar outcome of the last verify or settle of a request body, for the EXTENSION-RESPONSES header. */
export type Outcomes = WeakMap<object, BazaarOutcome>;

/**
 * The facilitator's service with its Bazaar: `/supported` names the `bazaar` extension, and a
 * payment that verified valid or settled has its echoed declaration catalogued (its outcome kept
 * per request body in `outcomes`). The verdicts themselves are the service's, unchanged.
 */
export function withDiscovery(service: FacilitatorService, catalogue: DiscoveryCatalogue, outcomes: Outcomes): FacilitatorService {
  const observe = async (body: unknown, passed: boolean) => {
    if (!passed || typeof body !== 'object' || body === null) return;
    const outcome = await catalogue.observe(body);
    if (outcome) outcomes.set(body, outcome);
  };
  return {
    ...service,
    async verify(body) {
      const verdict = await service.verify(body);
      await observe(body, verdict.isValid);
      return verdict;
    },
    async settle(body, options) {
      const answer = await service.settle(body, options);
      await observe(body, answer.success);
      return answer;
    },
    async supported() {
      const supported = await service.supported();
      return { ...supported, extensions: [...new Set([...(supported.extensions ?? []), 'bazaar'])] };
    },
  };
}
