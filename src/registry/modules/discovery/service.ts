import { and, asc, count, eq, inArray } from 'drizzle-orm';
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
import { skills, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { DEFAULT_LIMIT, searchSkills, selectSkills, toSkillView } from '../skills';
import type { PaymentAssets } from './assets';
import { discoveryScope } from './filters';
import type { CreatorProfile, ResourceBuilder } from './item';

/** What the discovery answers are made with, built once per registry. */
export interface DiscoveryDeps {
  assets: PaymentAssets;
  toResource: ResourceBuilder;
}

/**
 * `GET /discovery/resources`: one page of the offered skills (active, server not down, paid on a
 * network whose token is known), oldest listing first, and how many there are in all.
 */
export async function listResources(
  ctx: ServiceContext,
  deps: DiscoveryDeps,
  query: DiscoveryResourcesQuery,
): Promise<DiscoveryResourcesAnswer> {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const offset = query.offset ?? 0;
  const scope = discoveryScope(query, deps.assets.networks);
  if (!scope) return { x402Version: 2, items: [], pagination: { limit, offset, total: 0 } };
  const where = and(eq(skills.isActive, true), ...scope);
  const [rows, counted] = await Promise.all([
    selectSkills(ctx.db).where(where).orderBy(asc(skills.createdAt), asc(skills.id)).limit(limit).offset(offset),
    ctx.db.select({ total: count() }).from(skills).where(where),
  ]);
  const items = await toResources(ctx, deps, rows.map(toSkillView));
  return { x402Version: 2, items, pagination: { limit, offset, total: counted[0]?.total ?? 0 } };
}

/**
 * `GET /discovery/search`: the registry's skill search (ranked full text, one misspelt word
 * tolerated; newest first without words) over the offered skills, one page at a time.
 */
export async function searchResources(
  ctx: ServiceContext,
  deps: DiscoveryDeps,
  query: DiscoverySearchQuery,
): Promise<DiscoverySearchAnswer> {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const scope = discoveryScope(query, deps.assets.networks);
  if (!scope) return { x402Version: 2, resources: [], partialResults: false, pagination: { limit, cursor: null } };
  const search: SearchQuery = { limit };
  if (query.query !== undefined) search.q = query.query;
  if (query.cursor !== undefined) search.cursor = query.cursor;
  const { skills: found, nextCursor } = await searchSkills(ctx, search, scope);
  const resources = await toResources(ctx, deps, found);
  return { x402Version: 2, resources, partialResults: false, pagination: { limit, cursor: nextCursor ?? null } };
}

async function toResources(ctx: ServiceContext, deps: DiscoveryDeps, views: SkillView[]): Promise<DiscoveryResource[]> {
  if (views.length === 0) return [];
  const creatorIds = [...new Set(views.map((v) => v.creatorId))];
  const networks = [...new Set(views.map((v) => v.network))];
  const [profiles, assets] = await Promise.all([
    ctx.db.select({ id: users.id, name: users.name, avatar: users.avatar }).from(users).where(inArray(users.id, creatorIds)),
    Promise.all(networks.map(async (n) => [n, await deps.assets.assetOf(n)] as const)),
  ]);
  const creators = new Map<string, CreatorProfile>(profiles.map((p) => [p.id, p]));
  const assetOf = new Map<string, AssetInfo>(assets);
  return views.map((view) => deps.toResource(view, assetOf.get(view.network)!, creators.get(view.creatorId)));
}
