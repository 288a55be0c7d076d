import { eq, inArray, sql, type SQL } from 'drizzle-orm';
import { getAddress } from 'viem';
import { BATCH_SETTLEMENT_SCHEME, normalizeNetwork } from 'skill-market/x402';
import type { DiscoveryResourcesQuery } from 'skill-market/registry';
import { serverHealth, skills } from '../../../db/schema';

/** What every skill is in the Bazaar's terms: an HTTP resource, paid `exact`, described by the `bazaar` extension. */
const RESOURCE_TYPE = 'http';
const SCHEME = 'exact';
const EXTENSION = 'bazaar';

/** A skill whose server failed its last health probe is not offered: a payment to it would find nobody. */
const serverNotDown = sql`not exists (select 1 from ${serverHealth} where ${serverHealth.serverUrl} = ${skills.serverUrl} and ${serverHealth.status} = 'down')`;
/** Payment terms name the resource by a URL of at most 2048 characters (buildPaymentTerms; a skill server refuses to start otherwise). */
const payableUrl = sql`length(${skills.endpoint}) <= 2048`;

type Filters = Pick<DiscoveryResourcesQuery, 'type' | 'payTo' | 'scheme' | 'network' | 'extensions'>;

/** The skills a discovery query may list: conditions on `skills` besides being active, and a key naming them. */
export interface DiscoveryScope {
  conditions: SQL[];
  /** Only the skills whose accepts include a channel offer (`scheme=batch-settlement`), besides `conditions`. */
  channelsOnly: boolean;
  /** The same for every query of the same skills (`type=http` or none, `base` or `eip155:8453`); names the scheme asked. */
  key: string;
}

/**
 * The scope of a discovery query over skills paid on `payable` networks; undefined when no skill
 * can match (a type, scheme, extension or network no skill has). Blank `type`, `scheme` and
 * `extensions` are no filter; `exact` is every skill's scheme, `batch-settlement` that of those
 * whose server offers channels on their terms (decided by the service, see channels.ts).
 */
export function discoveryScope(filters: Filters, payable: readonly string[]): DiscoveryScope | undefined {
  const type = filters.type?.trim().toLowerCase();
  const scheme = filters.scheme?.trim().toLowerCase();
  if (type && type !== RESOURCE_TYPE) return undefined;
  if (scheme && scheme !== SCHEME && scheme !== BATCH_SETTLEMENT_SCHEME) return undefined;
  const keys = (filters.extensions ?? '').split(',').map((k) => k.trim().toLowerCase());
  if (keys.some((k) => k !== '' && k !== EXTENSION)) return undefined;
  let networks = payable;
  if (filters.network !== undefined) {
    const wanted = networkOf(filters.network);
    networks = payable.filter((n) => n === wanted);
    if (networks.length === 0) return undefined;
  }
  const payTo = filters.payTo ? getAddress(filters.payTo.toLowerCase()) : undefined;
  const conditions = [inArray(skills.network, [...networks]), serverNotDown, payableUrl];
  if (payTo) conditions.push(eq(skills.paymentAddress, payTo));
  return { conditions, channelsOnly: scheme === BATCH_SETTLEMENT_SCHEME, key: JSON.stringify([networks, payTo ?? null, scheme || null]) };
}

/** CAIP-2 as skills store it (`base` → `eip155:8453`); undefined for a network of no skill. */
function networkOf(network: string): string | undefined {
  try {
    return normalizeNetwork(network);
  } catch {
    return undefined;
  }
}
