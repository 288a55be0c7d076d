import { and, asc, count, inArray } from 'drizzle-orm';
import type {
  DiscoveryResource,
  DiscoveryResourcesAnswer,
  DiscoveryResourcesQuery,
  DiscoverySearchAnswer,
  DiscoverySearchQuery,
  SearchQuery,
  SkillView,
} from 'skill-market/registry';
import type { AssetInfo } from 'skill-market/x402';
import { skills } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { DEFAULT_LIMIT, listedWhere, searchSkills, selectSkills, toSkillView } from '../skills';
import type { PaymentAssets } from './assets';
import { channelSkillIds } from './channels';
import { type DiscoveryScope, discoveryScope } from './filters';
import type { ResourceBuilder } from './item';
import type { CreatorProfiles } from './profiles';
import { offersFor, reportedOffers } from './reported';

/** What the discovery answers are made with, built once per registry. */
export interface DiscoveryDeps {
  assets: PaymentAssets;
  toResource: ResourceBuilder;
  profiles: CreatorProfiles;
}

/** Keeps a value of content only between requests (the read cache's `remember`), or just loads it. */
export type Remember = <T>(key: string, load: () => Promise<T>) => Promise<T>;

/** Keeps nothing: the registry without a read cache (READ_CACHE_MS=0). */
export const loadEachTime: Remember = (_key, load) => load();

/**
 * `GET /discovery/resources`: one page of the offered skills (active, server not down, paid on a
 * network whose token is known), oldest listing first, and how many there are in all. The count,
 * the same for every page of a scope, is kept by `remember` and read before the page, alone; the
 * page is chosen on the narrow columns and only its rows are loaded whole.
 */
export async function listResources(
  ctx: ServiceContext,
  deps: DiscoveryDeps,
  query: DiscoveryResourcesQuery,
  remember: Remember = loadEachTime,
): Promise<DiscoveryResourcesAnswer> {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const offset = query.offset ?? 0;
  const scope = await offeredScope(ctx, deps, query, remember);
  if (!scope) return { x402Version: 2, items: [], pagination: { limit, offset, total: 0 } };
  const where = and(listedWhere(ctx.config.health), ...scope.conditions);
  const total = await remember(
    `discovery total ${scope.key}`,
    async () => (await ctx.db.select({ n: count() }).from(skills).where(where))[0]?.n ?? 0,
  );
  const order = [asc(skills.createdAt), asc(skills.id)];
  const page =
    offset < total
      ? await ctx.db
          .select({ id: skills.id })
          .from(skills)
          .where(where)
          .orderBy(...order)
          .limit(limit)
          .offset(offset)
      : [];
  const rows = page.length
    ? await selectSkills(ctx.db)
        .where(
          inArray(
            skills.id,
            page.map((r) => r.id),
          ),
        )
        .orderBy(...order)
    : [];
  return {
    x402Version: 2,
    items: await toResources(
      ctx,
      deps,
      rows.map((r) => toSkillView(r, ctx.config.chain)),
    ),
    pagination: { limit, offset, total },
  };
}

/**
 * `GET /discovery/search`: the registry's skill search (ranked full text, one misspelt word
 * tolerated; newest first without words) over the offered skills, one page at a time.
 */
export async function searchResources(
  ctx: ServiceContext,
  deps: DiscoveryDeps,
  query: DiscoverySearchQuery,
  remember: Remember = loadEachTime,
): Promise<DiscoverySearchAnswer> {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const scope = await offeredScope(ctx, deps, query, remember);
  if (!scope) return { x402Version: 2, resources: [], partialResults: false, pagination: { limit, cursor: null } };
  const search: SearchQuery = { limit };
  if (query.query !== undefined) search.q = query.query;
  if (query.cursor !== undefined) search.cursor = query.cursor;
  const { skills: found, nextCursor } = await searchSkills(ctx, search, scope.conditions);
  const resources = await toResources(ctx, deps, found);
  return { x402Version: 2, resources, partialResults: false, pagination: { limit, cursor: nextCursor ?? null } };
}

/**
 * The skills a query may list; with `scheme=batch-settlement` only those whose accepts include a
 * channel offer, found once per scope and kept by `remember` (channels.ts). Undefined: none.
 */
async function offeredScope(
  ctx: ServiceContext,
  deps: DiscoveryDeps,
  query: DiscoveryResourcesQuery | DiscoverySearchQuery,
  remember: Remember,
): Promise<DiscoveryScope | undefined> {
  const scope = discoveryScope(query, deps.assets.networks);
  if (!scope?.channelsOnly) return scope;
  const ids = await remember(`discovery channel skills ${scope.key}`, () => channelSkillIds(ctx, deps.assets, scope.conditions));
  return ids.length ? { ...scope, conditions: [...scope.conditions, inArray(skills.id, ids)] } : undefined;
}

async function toResources(ctx: ServiceContext, deps: DiscoveryDeps, views: SkillView[]): Promise<DiscoveryResource[]> {
  if (views.length === 0) return [];
  const networks = [...new Set(views.map((v) => v.network))];
  const [creators, assets, offers] = await Promise.all([
    deps.profiles(
      ctx.db,
      views.map((v) => v.creatorId),
    ),
    Promise.all(networks.map(async (n) => [n, await deps.assets.assetOf(n)] as const)),
    reportedOffers(
      ctx,
      views.map((v) => v.endpoint),
    ),
  ]);
  const assetOf = new Map<string, AssetInfo>(assets);
  return views.map((view) =>
    deps.toResource(view, assetOf.get(view.network)!, creators.get(view.creatorId), offersFor(view.endpoint, offers)),
  );
}
