/**
 * Other catalogues: Bazaar-compatible discovery APIs (the x402 `bazaar` extension's
 * `GET /discovery/search` and `/discovery/resources`: a facilitator's, another registry's) read
 * beside the registry. Each x402 resource a client on this network could pay becomes a listing
 * like the registry's, from its `accepts`: the terms it lists are the contract a 402 is checked
 * against (payee, network, asset, exactly the price), as for the registry's own listings. Its
 * slug and id are its URL; `source` says which catalogue listed it.
 */
import { excerpt, MarketError, NoAnswerError } from '../http/errors';
import { exchange, type FetchLike, isRecord, parseJson } from '../http/exchange';
import { getAddress } from 'viem';
import type { JsonSchema } from '../json-schema/index';
import type { Skill } from '../registry/read';
import { type Caip2Network, formatPriceUsd, normalizeNetwork } from '../x402/index';
import { ADDRESS_PATTERN } from '../x402/patterns';

/** A listing found in another catalogue: `source` is that catalogue's base URL. */
export type DiscoveredSkill = Skill & { source: string };

/** A catalogue that could not be read, and why (a search goes on without it). */
export interface CatalogueProblem {
  source: string;
  message: string;
}

/** Pages read through `/discovery/resources` when looking a resource up by URL. */
const MAX_LOOKUP_PAGES = 10;
const PAGE = 100;
const ATOMIC = /^[1-9][0-9]{0,30}$/;

/** Whether `target` names a resource by its URL (not a registry slug). */
export const isResourceUrl = (target: string): boolean => /^https?:\/\//i.test(target) && URL.canParse(target);

/** Reads Bazaar discovery APIs for one client (its network, fetch and timeout). */
export class Catalogues {
  constructor(
    readonly sources: readonly string[],
    private readonly network: Caip2Network,
    private readonly fetch: FetchLike,
    private readonly timeoutMs: number,
  ) {}

  /** Every catalogue's matches for `query` (up to `limit` each), and the catalogues that failed. */
  async search(query: string, limit: number): Promise<{ skills: DiscoveredSkill[]; problems: CatalogueProblem[] }> {
    const answers = await Promise.all(
      this.sources.map(async (source) => {
        try {
          const params = new URLSearchParams({ query, limit: String(limit) });
          const body = await this.read(source, `/discovery/search?${params}`);
          return { skills: this.listings(source, isRecord(body) ? body.resources : undefined) };
        } catch (error) {
          return { problem: { source, message: (error as Error).message } };
        }
      }),
    );
    return {
      skills: answers.flatMap((a) => a.skills ?? []),
      problems: answers.flatMap((a) => (a.problem ? [a.problem] : [])),
    };
  }

  /**
   * The listing of the resource at `url` in the first catalogue that lists it; undefined when none
   * does. A catalogue that cannot be read is passed over; when no other lists it, that catalogue's
   * error is thrown (it might have).
   */
  async find(url: string, signal?: AbortSignal): Promise<DiscoveredSkill | undefined> {
    let failure: unknown;
    for (const source of this.sources) {
      try {
        for (let page = 0; page < MAX_LOOKUP_PAGES; page++) {
          const body = await this.read(source, `/discovery/resources?limit=${PAGE}&offset=${page * PAGE}`, signal);
          const items = isRecord(body) && Array.isArray(body.items) ? body.items : [];
          const found = this.listings(source, items).find((s) => s.endpoint === url);
          if (found) return found;
          if (items.length < PAGE) break;
        }
      } catch (error) {
        if (signal?.aborted) throw error;
        failure ??= error;
      }
    }
    if (failure) throw failure;
    return undefined;
  }

  private async read(source: string, path: string, signal?: AbortSignal): Promise<unknown> {
    const url = `${source.replace(/\/+$/, '')}${path}`;
    let answer: Awaited<ReturnType<typeof exchange>>;
    try {
      answer = await exchange(
        url,
        { headers: { accept: 'application/json' } },
        {
          fetch: this.fetch,
          timeoutMs: this.timeoutMs,
          retries: 1,
          signal,
          what: `catalogue ${source}`,
        },
      );
    } catch (error) {
      if (error instanceof NoAnswerError) throw new MarketError('network_error', error.message, { cause: error });
      throw error;
    }
    const parsed = parseJson(answer.text);
    if (answer.status !== 200 || !parsed.ok) {
      throw new MarketError('invalid_response', `The catalogue ${source} answered ${answer.status}: ${excerpt(answer.text)}`, {
        status: answer.status,
      });
    }
    return parsed.value;
  }

  /** The resources of a discovery answer this client could pay, as listings; the others are left out. */
  private listings(source: string, resources: unknown): DiscoveredSkill[] {
    if (!Array.isArray(resources)) return [];
    return resources.flatMap((resource) => {
      const listing = this.listing(source, resource);
      return listing ? [listing] : [];
    });
  }

  /** An `http` resource called by POST with a JSON body (or of no stated method) with `exact` terms on this network. */
  private listing(source: string, resource: unknown): DiscoveredSkill | undefined {
    if (!isRecord(resource) || (resource.type !== undefined && resource.type !== 'http')) return undefined;
    const url = typeof resource.resource === 'string' && isResourceUrl(resource.resource) ? resource.resource : undefined;
    if (!url || !Array.isArray(resource.accepts)) return undefined;
    const declared = isRecord(resource.extensions) && isRecord(resource.extensions.bazaar) ? resource.extensions.bazaar : undefined;
    const input = isRecord(declared?.info) && isRecord(declared.info.input) ? declared.info.input : undefined;
    if (input?.method !== undefined && input.method !== 'POST') return undefined;
    const terms = resource.accepts.find(
      (a): a is Record<string, string> =>
        isRecord(a) &&
        a.scheme === 'exact' &&
        this.onNetwork(a.network) &&
        typeof a.amount === 'string' &&
        ATOMIC.test(a.amount) &&
        typeof a.payTo === 'string' &&
        ADDRESS_PATTERN.test(a.payTo),
    );
    if (!terms) return undefined;
    const name = typeof resource.serviceName === 'string' && resource.serviceName ? resource.serviceName : new URL(url).pathname;
    return {
      id: url,
      slug: url,
      name,
      description: typeof resource.description === 'string' ? resource.description : null,
      price: formatPriceUsd(BigInt(terms.amount!)),
      priceAtomic: terms.amount!,
      network: this.network,
      endpoint: url,
      paymentAddress: getAddress(terms.payTo!.toLowerCase()),
      isActive: true,
      inputSchema: bodySchema(declared?.schema),
      outputSchema: null,
      groups: Array.isArray(resource.tags) ? resource.tags.filter((t): t is string => typeof t === 'string') : [],
      source,
    };
  }

  private onNetwork(network: unknown): boolean {
    try {
      return typeof network === 'string' && normalizeNetwork(network) === this.network;
    } catch {
      return false;
    }
  }
}

/** The JSON Schema of the request body a bazaar declaration's schema gives, if any (checked before paying). */
function bodySchema(schema: unknown): JsonSchema | null {
  const input = isRecord(schema) && isRecord(schema.properties) ? schema.properties.input : undefined;
  const body = isRecord(input) && isRecord(input.properties) ? input.properties.body : undefined;
  return isRecord(body) ? body : null;
}
