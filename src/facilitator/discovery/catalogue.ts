/**
 * The facilitator's Bazaar: the `bazaar` declarations echoed in the payments it verifies and
 * settles become its catalogue, served by `GET /discovery/resources` and `/discovery/search`,
 * so a resource paid through this facilitator can be found here without being listed anywhere.
 * Only a payment that passed (valid, or settled) is catalogued: a declaration alone proves nothing.
 * The terms listed are what the resource's live 402 asks now (refresher.ts), the paid ones until
 * it was first read.
 */
import { normalizeNetwork } from 'skill-market/x402';
import type { Database } from '../../db';
import type { Logger } from '../../log';
import type { Clock } from '../types';
import { readDeclaration } from './declaration';
import { createCatalogueRefresher, type RefreshOptions, type RefreshReport } from './refresher';
import { createResourceStore, type ResourceFilters, type ResourceRow } from './store';

/** The bazaar's outcome for one payment, as the EXTENSION-RESPONSES sidechannel reports it. */
export type BazaarOutcome = { status: 'success' } | { status: 'rejected'; rejectedReason: string };

/** A catalogued resource as the Bazaar's discovery API answers it. */
interface CataloguedResource {
  resource: string;
  type: 'http' | 'mcp';
  x402Version: 2;
  accepts: Record<string, unknown>[];
  lastUpdated: string;
  description?: string;
  mimeType?: string;
  serviceName?: string;
  tags?: string[];
  iconUrl?: string;
  extensions: Record<string, unknown>;
}

/** Filters as a discovery query gives them. */
interface DiscoveryFilters {
  type?: string | undefined;
  payTo?: string | undefined;
  scheme?: string | undefined;
  network?: string | undefined;
  extensions?: string | undefined;
}

export const DEFAULT_DISCOVERY_LIMIT = 20;
const EXTENSION = 'bazaar';
const MAX_WORDS = 8;

export interface DiscoveryCatalogue {
  /** Catalogues what a verify or settle request body declares, once its payment passed; undefined when it declares nothing. */
  observe(body: unknown): Promise<BazaarOutcome | undefined>;
  list(filters: DiscoveryFilters, limit: number, offset: number): Promise<{ items: CataloguedResource[]; total: number }>;
  search(query: string, filters: DiscoveryFilters, limit: number, offset: number): Promise<{ items: CataloguedResource[]; more: boolean }>;
  /** A pass of live 402 reads that starts after this call (what was catalogued before it is read if due). */
  refresh(): Promise<RefreshReport>;
  /** Reads the due live 402s at once, then every refresh interval. */
  start(): void;
  /** Stops the reads; waits for the running pass. */
  stop(): Promise<void>;
}

export function createDiscoveryCatalogue(db: Database, clock: Clock, logger: Logger, refresh: RefreshOptions): DiscoveryCatalogue {
  const store = createResourceStore(db);
  const refresher = createCatalogueRefresher(store, clock, logger, refresh);
  return {
    async observe(body) {
      const declaration = readDeclaration(body);
      if (declaration.type === 'none') return undefined;
      if (declaration.type === 'rejected') return { status: 'rejected', rejectedReason: declaration.reason };
      try {
        // New, or paid at terms it does not list: its live 402 is read off the payment's path.
        if (await store.record(declaration.resource, clock.now())) refresher.nudge();
        return { status: 'success' };
      } catch (error) {
        // The catalogue is a side table: its failure never changes a payment's verdict.
        logger.error('bazaar: recording a resource failed', { resource: declaration.resource.resource, error });
        return { status: 'rejected', rejectedReason: 'the facilitator could not record it' };
      }
    },

    async list(filters, limit, offset) {
      const normalized = normalize(filters);
      if (!normalized) return { items: [], total: 0 };
      const { rows, total } = await store.page(normalized, limit, offset);
      return { items: rows.map(toResource), total };
    },

    async search(query, filters, limit, offset) {
      const normalized = normalize(filters);
      if (!normalized) return { items: [], more: false };
      const words = query.toLowerCase().split(/\s+/).filter(Boolean).slice(0, MAX_WORDS);
      const { rows, total } = await store.page({ ...normalized, words }, limit, offset);
      return { items: rows.map(toResource), more: offset + rows.length < total };
    },

    refresh: () => refresher.refresh(),
    start: () => refresher.start(),
    stop: () => refresher.stop(),
  };
}

/** The store's filters; undefined when nothing can match (an extension other than bazaar, an unknown network). */
function normalize(filters: DiscoveryFilters): ResourceFilters | undefined {
  const keys = (filters.extensions ?? '').split(',').map((k) => k.trim().toLowerCase());
  if (keys.some((k) => k !== '' && k !== EXTENSION)) return undefined;
  let network: string | undefined;
  if (filters.network?.trim()) {
    try {
      network = normalizeNetwork(filters.network.trim());
    } catch {
      return undefined;
    }
  }
  return {
    type: filters.type?.trim().toLowerCase() || undefined,
    payTo: filters.payTo?.trim() || undefined,
    scheme: filters.scheme?.trim().toLowerCase() || undefined,
    network,
  };
}

function toResource(row: ResourceRow): CataloguedResource {
  return {
    resource: row.resource,
    type: row.type,
    x402Version: 2,
    accepts: row.accepts,
    lastUpdated: row.updatedAt.toISOString(),
    ...(row.description ? { description: row.description } : {}),
    ...(row.mimeType ? { mimeType: row.mimeType } : {}),
    ...(row.serviceName ? { serviceName: row.serviceName } : {}),
    ...(row.tags?.length ? { tags: row.tags } : {}),
    ...(row.iconUrl ? { iconUrl: row.iconUrl } : {}),
    extensions: row.extensions,
  };
}
