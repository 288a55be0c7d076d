import { type AnyPaymentRequirements, buildPaymentTerms, DEFAULT_MAX_TIMEOUT_SECONDS, type AssetInfo } from 'skill-market/x402';
import type { DiscoveryResource, SkillView } from 'skill-market/registry';
import { bazaarExtension, type BazaarExtension } from 'skill-market/creator';
import { serviceMetadata } from 'skill-market/x402';
import { listedAccepts } from './offers';

/** What a skill's creator shows of themselves: their profile's name and avatar. */
export interface CreatorProfile {
  name: string | null;
  avatar: string | null;
}

/** What a skill server answers a paid call with (its 402 `resource.mimeType`). */
const SKILL_MIME_TYPE = 'application/json';
/** Extensions kept, one per pair of schemas: building one compiles its schema. */
const MAX_EXTENSIONS = 10_000;

/**
 * Turns skill listings into Bazaar resources. The `bazaar` extension of each pair of schemas is
 * built once and kept (at most {@link MAX_EXTENSIONS}, the oldest go first).
 */
export function resourceBuilder() {
  const extensions = new Map<string, BazaarExtension>();
  const extensionOf = (skill: SkillView): BazaarExtension => {
    // By content: skills of the same schemas (many have none) share one.
    const key = Bun.hash(JSON.stringify([skill.inputSchema, skill.outputSchema])).toString(36);
    let extension = extensions.get(key);
    if (!extension) {
      extension = bazaarExtension(skill.inputSchema, skill.outputSchema);
      if (extensions.size >= MAX_EXTENSIONS) extensions.delete(extensions.keys().next().value!);
      extensions.set(key, extension);
    }
    return extension;
  };

  /**
   * The skill as an x402 resource. `accepts` is built by the same function from the same inputs
   * as the skill server's 402 (`serve()`: price, payTo, network, the network's token, the default
   * payment window), so the two offer the same terms; with the `offers` its server reported (see
   * offers.ts), its payment window and its channel offer too. `serviceName` is the creator's name, else
   * the skill's; `iconUrl` the creator's avatar; `tags` the skill's groups (each only where the
   * Bazaar's rules allow it).
   */
  return (skill: SkillView, asset: AssetInfo, creator: CreatorProfile | undefined, offers?: readonly unknown[]): DiscoveryResource => {
    return {
      resource: skill.endpoint,
      type: 'http',
      x402Version: 2,
      accepts: listingAccepts(skill, asset, offers) as DiscoveryResource['accepts'],
      lastUpdated: skill.updatedAt,
      ...(skill.description ? { description: skill.description } : {}),
      mimeType: SKILL_MIME_TYPE,
      ...serviceMetadata([creator?.name, skill.name], skill.groups, creator?.avatar),
      extensions: { bazaar: extensionOf(skill) as unknown as DiscoveryResource['extensions']['bazaar'] },
    };
  };
}

/** What of a listing its payment terms are made of. */
export type ListingTerms = Pick<SkillView, 'priceAtomic' | 'paymentAddress' | 'network' | 'endpoint'>;

/**
 * The accepts a listing shows: its `exact` terms, built by the same function from the same inputs
 * as the skill server's 402, and what of the server's reported `offers` stands on them (offers.ts).
 */
export function listingAccepts(skill: ListingTerms, asset: AssetInfo, offers: readonly unknown[] | undefined): AnyPaymentRequirements[] {
  const terms = buildPaymentTerms({
    amount: BigInt(skill.priceAtomic),
    payTo: skill.paymentAddress,
    network: skill.network,
    asset,
    resourceUrl: skill.endpoint,
    mimeType: SKILL_MIME_TYPE,
    maxTimeoutSeconds: DEFAULT_MAX_TIMEOUT_SECONDS,
  });
  return listedAccepts(terms.requirements, offers);
}

/** Builds one resource; see {@link resourceBuilder}. */
export type ResourceBuilder = ReturnType<typeof resourceBuilder>;
