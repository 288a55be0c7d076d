import { and, asc, desc, eq, exists, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import { getAddress } from 'viem';
import { skillGroupMembers, skillGroups, skills, skillStats, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../errors';
import type { SearchQuery, SkillView, Sort } from './model';
import { selectSkills, toSkillView } from './view';
import { priceToAtomic } from './validate';

export const DEFAULT_LIMIT = 20;

/**
 * Discovery: active skills matching the filters, ordered by `sort`, one page at a time. `q` is a
 * full-text search (English stemming, every word a prefix) over name (weight A) and description
 * (weight B), ranked. Pages are keyset cursors over (sort value, id): no duplicates or gaps.
 */
export async function searchSkills(ctx: ServiceContext, query: SearchQuery): Promise<{ skills: SkillView[]; nextCursor: string | undefined }> {
  const tsquery = toTsQuery(query.q ?? '');
  const sort: Sort = query.sort ?? (tsquery ? 'relevance' : 'newest');
  if (sort === 'relevance' && !tsquery) throw new AppError('VALIDATION', 'Invalid request: sort=relevance needs a search query q');
  const match = tsquery ? sql`to_tsquery('english', ${tsquery})` : undefined;
  const key = sortKey(sort, match);
  const limit = query.limit ?? DEFAULT_LIMIT;

  const filters: (SQL | undefined)[] = [eq(skills.isActive, true)];
  if (match) filters.push(sql`${skills.search} @@ ${match}`);
  if (query.category) filters.push(eq(skills.category, query.category));
  if (query.minPrice) filters.push(gte(skills.priceAtomic, priceFilter('minPrice', query.minPrice)));
  if (query.maxPrice) filters.push(lte(skills.priceAtomic, priceFilter('maxPrice', query.maxPrice)));
  if (query.creator) filters.push(eq(users.walletAddress, addressFilter(query.creator)));
  if (query.verified === 'true' || query.verified === 'false') filters.push(eq(skills.verified, query.verified === 'true'));
  if (query.group) {
    filters.push(
      exists(
        ctx.db
          .select({ one: sql`1` })
          .from(skillGroupMembers)
          .innerJoin(skillGroups, eq(skillGroups.id, skillGroupMembers.groupId))
          .where(and(eq(skillGroupMembers.skillId, skills.id), sql`(${skillGroups.slug} = ${query.group} or lower(${skillGroups.name}) = lower(${query.group}))`)),
      ),
    );
  }
  if (query.cursor) {
    const [value, id] = decodeCursor(query.cursor);
    filters.push(key.after(value, id));
  }

  // Page first on the narrow columns, then load the full rows of that page only: the group
  // names and the creator are computed for 20 rows, not for every match.
  const needsStats = sort === 'popular' || sort === 'revenue';
  let pageQuery = ctx.db
    .select({
      id: skills.id,
      createdAt: skills.createdAt,
      priceAtomic: skills.priceAtomic,
      callCount: needsStats ? skillStats.callCount : sql<number>`0`,
      totalRevenue: needsStats ? skillStats.totalRevenue : sql<bigint>`0`,
      rank: key.rank ?? sql<number>`0`,
    })
    .from(skills)
    .$dynamic();
  if (needsStats) pageQuery = pageQuery.innerJoin(skillStats, eq(skillStats.skillId, skills.id));
  if (query.creator) pageQuery = pageQuery.innerJoin(users, eq(users.id, skills.creatorId));
  const page = await pageQuery.where(and(...filters)).orderBy(...key.order).limit(limit + 1);
  const shown = page.slice(0, limit);
  const full = shown.length ? await selectSkills(ctx.db).where(inArray(skills.id, shown.map((r) => r.id))) : [];
  const byId = new Map(full.map((r) => [r.skill.id, r]));
  const last = shown[shown.length - 1];
  const nextCursor = page.length > limit && last ? encodeCursor(key.valueOf(last), last.id) : undefined;
  return { skills: shown.map((r) => toSkillView(byId.get(r.id)!)), nextCursor };
}

type Row = { id: string; createdAt: Date; priceAtomic: bigint; callCount: number; totalRevenue: bigint; rank: number };

interface SortKey {
  rank?: SQL<number>;
  order: SQL[];
  after(value: string, id: string): SQL;
  valueOf(row: Row): string;
}

/** Each order is (value, id) in one direction, so a row comparison continues it exactly. */
function sortKey(sort: Sort, match: SQL | undefined): SortKey {
  switch (sort) {
    case 'relevance': {
      const rank = sql<number>`ts_rank(${skills.search}, ${match!})`;
      return {
        rank,
        order: [desc(rank), desc(skills.id)],
        after: (v, id) => sql`(${rank}, ${skills.id}) < (${v}::real, ${id}::uuid)`,
        valueOf: (row) => String(row.rank),
      };
    }
    case 'newest':
      return {
        order: [desc(skills.createdAt), desc(skills.id)],
        after: (v, id) => sql`(${skills.createdAt}, ${skills.id}) < (${v}::timestamptz, ${id}::uuid)`,
        valueOf: (row) => row.createdAt.toISOString(),
      };
    case 'price':
      return {
        order: [asc(skills.priceAtomic), asc(skills.id)],
        after: (v, id) => sql`(${skills.priceAtomic}, ${skills.id}) > (${v}::bigint, ${id}::uuid)`,
        valueOf: (row) => row.priceAtomic.toString(),
      };
    case 'popular':
      return {
        order: [desc(skillStats.callCount), desc(skills.id)],
        after: (v, id) => sql`(${skillStats.callCount}, ${skills.id}) < (${v}::int, ${id}::uuid)`,
        valueOf: (row) => String(row.callCount),
      };
    case 'revenue':
      return {
        order: [desc(skillStats.totalRevenue), desc(skills.id)],
        after: (v, id) => sql`(${skillStats.totalRevenue}, ${skills.id}) < (${v}::bigint, ${id}::uuid)`,
        valueOf: (row) => String(row.totalRevenue),
      };
  }
}

/** "weather fore" → "weather:* & fore:*"; only letters and digits reach the query. */
export function toTsQuery(q: string): string | undefined {
  const words = (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 8);
  return words.length ? words.map((w) => `${w}:*`).join(' & ') : undefined;
}

/** A keyset cursor over (sort value, id); opaque to clients. */
export function encodeCursor(value: string, id: string): string {
  return Buffer.from(JSON.stringify([value, id])).toString('base64url');
}

export function decodeCursor(cursor: string): [string, string] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string' && /^[0-9a-f-]{36}$/.test(parsed[1])) {
      return [parsed[0], parsed[1]];
    }
  } catch {
    // reported below
  }
  throw new AppError('VALIDATION', 'Invalid request: field "cursor": not a cursor this registry issued');
}

function priceFilter(field: string, value: string): bigint {
  try {
    return priceToAtomic(value);
  } catch {
    throw new AppError('VALIDATION', `Invalid request: field "${field}": must be a USDC amount such as 0.01`);
  }
}

function addressFilter(value: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new AppError('VALIDATION', 'Invalid request: field "creator": must be a 0x address');
  return getAddress(value.toLowerCase());
}
