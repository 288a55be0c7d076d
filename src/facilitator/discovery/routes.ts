import { Elysia } from 'elysia';
import { DiscoveryResourcesQuery, DiscoverySearchQuery } from 'skill-market/registry';
import { AppError } from '../../http';
import { DEFAULT_DISCOVERY_LIMIT, type DiscoveryCatalogue } from './catalogue';

const tags = ['Discovery'];
/** A search cursor is the offset of the next page, in digits. */
const CURSOR = /^(0|[1-9][0-9]{0,8})$/;

/**
 * The Bazaar discovery API over what this facilitator catalogued (the bazaar extension's optional
 * endpoints): `GET /discovery/resources` by limit and offset, oldest first, and
 * `GET /discovery/search` (every word found in the URL, description, service name or tags),
 * paged by cursor. The same queries as the registry's discovery API.
 */
export function facilitatorDiscoveryRoutes(catalogue: DiscoveryCatalogue, prefix = '') {
  return new Elysia({ prefix, name: 'facilitator-discovery' })
    .get(
      '/discovery/resources',
      async ({ query }) => {
        const limit = query.limit ?? DEFAULT_DISCOVERY_LIMIT;
        const offset = query.offset ?? 0;
        const { items, total } = await catalogue.list(query, limit, offset);
        return { x402Version: 2 as const, items, pagination: { limit, offset, total } };
      },
      {
        query: DiscoveryResourcesQuery,
        detail: {
          tags,
          summary: 'x402 Bazaar: the resources whose bazaar declaration came with a payment verified or settled here, oldest first',
        },
      },
    )
    .get(
      '/discovery/search',
      async ({ query }) => {
        const limit = query.limit ?? DEFAULT_DISCOVERY_LIMIT;
        if (query.cursor !== undefined && !CURSOR.test(query.cursor)) {
          throw new AppError('VALIDATION', 'Invalid request: query field "cursor": must be the pagination.cursor of a previous answer');
        }
        const offset = query.cursor ? Number(query.cursor) : 0;
        const { items, more } = await catalogue.search(query.query ?? '', query, limit, offset);
        return {
          x402Version: 2 as const,
          resources: items,
          partialResults: false,
          pagination: { limit, cursor: more ? String(offset + items.length) : null },
        };
      },
      {
        query: DiscoverySearchQuery,
        detail: { tags, summary: 'x402 Bazaar: search what this facilitator catalogued; the next page by pagination.cursor' },
      },
    );
}
