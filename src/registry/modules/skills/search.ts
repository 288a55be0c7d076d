import { and, asc, desc, eq, exists, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import { getAddress } from 'viem';
import { ADDRESS_PATTERN } from 'skill-market/x402';
import { skillGroupMembers, skillGroups, skills, skillStats, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { healthCondition } from '../skill-health';
import { AppError } from '../../../http';
import { decodeCursor, encodeCursor, isIsoInstant } from '../../lib/cursor';
import type { SearchQuery, SkillView, Sort } from 'skill-market/registry';
import { selectSkills, toSkillView } from './view';
import { priceToAtomic } from './validate';
import { listedWhere } from './visibility';

export const DEFAULT_LIMIT = 20;

/**
 * Discovery: active skills matching the filters, ordered by `sort`, one page at a time. `q` is a
 * full-text search (English stemming, every word a prefix) over name (weight A) and description
 * (weight B), ranked. Pages are keyset cursors over (sort value, id): no duplicates or gaps.
 * `scope`: conditions on `skills` every result must meet besides the query's (e.g. the Bazaar
 * catalogue's payable networks).
 */
export async function searchSkills(
  ctx: ServiceContext,
  query: SearchQuery,
  scope: SQL[] = [],
): Promise<{ skills: SkillView[]; nextCursor: string | undefined }> {
  const match = toTsQuery(query.q ?? '');
  const sort: Sort = query.sort ?? (match ? 'relevance' : 'newest');
  if (sort === 'relevance' && !match) throw new AppError('VALIDATION', 'Invalid request: sort=relevance needs a search query q');
  const key = sortKey(sort, match);
  const limit = query.limit ?? DEFAULT_LIMIT;

  const filters: (SQL | undefined)[] = [listedWhere(ctx.config.health), ...scope];
  if (query.category) filters.push(eq(skills.category, query.category));
  if (query.minPrice) filters.push(gte(skills.priceAtomic, priceFilter('minPrice', query.minPrice)));
  if (query.maxPrice) filters.push(lte(skills.priceAtomic, priceFilter('maxPrice', query.maxPrice)));
  // A condition on skills alone (no join), so every query over these filters can take it.
  if (query.creator)
    filters.push(
      inArray(
        skills.creatorId,
        ctx.db
          .select({ id: users.id })
          .from(users)
          .where(eq(users.walletAddress, addressFilter(query.creator))),
      ),
    );
  if (query.verified === 'true' || query.verified === 'false') filters.push(eq(skills.verified, query.verified === 'true'));
  if (query.group) {
    filters.push(
      exists(
        ctx.db
          .select({ one: sql`1` })
          .from(skillGroupMembers)
          .innerJoin(skillGroups, eq(skillGroups.id, skillGroupMembers.groupId))
          .where(
            and(
              eq(skillGroupMembers.skillId, skills.id),
              sql`(${skillGroups.slug} = ${query.group} or lower(${skillGroups.name}) = lower(${query.group}))`,
            ),
          ),
      ),
    );
  }
  filters.push(healthCondition(query.status, new Date(ctx.clock.now().getTime() - ctx.config.health.hideAfterSeconds * 1000)));
  const filtered = [...filters];
  if (match) filters.push(sql`${skills.search} @@ ${match}`);
  if (query.cursor) {
    const [value, id] = decodeCursor(query.cursor, key.accepts);
    filters.push(key.after(value, id));
  }

  // Page first on the narrow columns, then load the full rows of that page only: the group
  // names and the creator are computed for 20 rows, not for every match.
  const needsStats = sort === 'popular' || sort === 'revenue' || sort === 'rating';
  let pageQuery = ctx.db
    .select({
      id: skills.id,
      createdAt: skills.createdAt,
      priceAtomic: skills.priceAtomic,
      popularity: needsStats ? skillStats.popularity : sql<bigint>`0`,
      totalRevenue: needsStats ? skillStats.totalRevenue : sql<bigint>`0`,
      averageRating: needsStats ? averageRating : sql<string>`0`,
      rank: key.rank ?? sql<number>`0`,
    })
    .from(skills)
    .$dynamic();
  if (needsStats) pageQuery = pageQuery.innerJoin(skillStats, eq(skillStats.skillId, skills.id));
  const page = await pageQuery
    .where(and(...filters))
    .orderBy(...key.order)
    .limit(limit + 1);
  const typo = page.length === 0 && !query.cursor && sort === 'relevance' ? typoTolerant(query.q ?? '') : undefined;
  const shown = typo ? await nearNames(ctx, typo, filtered, limit) : page.slice(0, limit);
  const full = shown.length
    ? await selectSkills(ctx.db).where(
        inArray(
          skills.id,
          shown.map((r) => r.id),
        ),
      )
    : [];
  const byId = new Map(full.map((r) => [r.skill.id, r]));
  const last = page[limit - 1];
  const nextCursor = page.length > limit && last ? encodeCursor(key.valueOf(last), last.id) : undefined;
  return { skills: shown.map((r) => toSkillView(byId.get(r.id)!, ctx.config.chain)), nextCursor };
}

/**
 * A single word of at least 4 letters that matched nothing may be misspelt: it is then looked up
 * among skill names by trigram word similarity (pg_trgm), e.g. "wether" finds "weather-now".
 */
function typoTolerant(q: string): string | undefined {
  const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.length === 1 && words[0]!.length >= 4 && words[0]!.length <= 64 ? words[0] : undefined;
}

/** How alike a word and a name must be, 0 to 1 (pg_trgm's word_similarity). */
const TYPO_SIMILARITY = 0.4;

/**
 * One page of the active skills (with the other filters) whose name has a part like `word`, most
 * alike first. The trigram index answers `<%` under the session's threshold, set for this
 * transaction only; there is no next page.
 */
async function nearNames(ctx: ServiceContext, word: string, filters: (SQL | undefined)[], limit: number): Promise<{ id: string }[]> {
  const likeness = sql<number>`word_similarity(${word}, ${skills.name})`;
  return ctx.db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('pg_trgm.word_similarity_threshold', ${String(TYPO_SIMILARITY)}, true)`);
    return tx
      .select({ id: skills.id })
      .from(skills)
      .where(and(...filters, sql`${word} <% ${skills.name}`))
      .orderBy(desc(likeness), desc(skills.id))
      .limit(limit);
  });
}

type Row = {
  id: string;
  createdAt: Date;
  priceAtomic: bigint;
  popularity: bigint;
  totalRevenue: bigint;
  averageRating: string;
  rank: number;
};

/** Exact average review score (numeric); unreviewed skills rank below every rated one. */
const averageRating = sql<string>`(case when ${skillStats.reviewCount} > 0 then ${skillStats.ratingSum}::numeric / ${skillStats.reviewCount} else 0 end)`;

interface SortKey {
  rank?: SQL<number>;
  order: SQL[];
  /** Whether a cursor's value casts to this order's type (a forged one must not reach the database). */
  accepts(value: string): boolean;
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
        accepts: (v) => /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(v) && fitsReal(Number(v)),
        after: (v, id) => sql`(${rank}, ${skills.id}) < (${v}::real, ${id}::uuid)`,
        valueOf: (row) => String(row.rank),
      };
    }
    case 'newest':
      return {
        order: [desc(skills.createdAt), desc(skills.id)],
        accepts: isIsoInstant,
        after: (v, id) => sql`(${skills.createdAt}, ${skills.id}) < (${v}::timestamptz, ${id}::uuid)`,
        valueOf: (row) => row.createdAt.toISOString(),
      };
    case 'price':
      return {
        order: [asc(skills.priceAtomic), asc(skills.id)],
        accepts: (v) => fitsInteger(v, 63),
        after: (v, id) => sql`(${skills.priceAtomic}, ${skills.id}) > (${v}::bigint, ${id}::uuid)`,
        valueOf: (row) => row.priceAtomic.toString(),
      };
    case 'popular': // distinct paying wallets, then verified paid calls: one wallet's volume buys one buyer
      return {
        order: [desc(skillStats.popularity), desc(skills.id)],
        accepts: (v) => fitsInteger(v, 63),
        after: (v, id) => sql`(${skillStats.popularity}, ${skills.id}) < (${v}::bigint, ${id}::uuid)`,
        valueOf: (row) => String(row.popularity),
      };
    case 'rating':
      return {
        order: [desc(averageRating), desc(skills.id)],
        accepts: (v) => /^\d{1,3}(\.\d{1,40})?$/.test(v),
        after: (v, id) => sql`(${averageRating}, ${skills.id}) < (${v}::numeric, ${id}::uuid)`,
        valueOf: (row) => String(row.averageRating),
      };
    case 'revenue':
      return {
        order: [desc(skillStats.totalRevenue), desc(skills.id)],
        accepts: (v) => fitsInteger(v, 63),
        after: (v, id) => sql`(${skillStats.totalRevenue}, ${skills.id}) < (${v}::numeric, ${id}::uuid)`,
        valueOf: (row) => String(row.totalRevenue),
      };
  }
}

/**
 * "weather fore" → every word a prefix: `weather:* & fore:*`, each word stemmed as the English
 * configuration parses it (and a word with a digit also as it is, and signed). Only letters and
 * digits reach the query. As it is, because the parser reads some words differently alone than
 * inside a hyphenated name: "9e9e9e9e" alone is the number 9e9 and the word e9e9e, while
 * "tick-9e9e9e9e" keeps it whole; signed, because after a hyphen digits are a negative number:
 * "tick-12345678" is the words `tick` and `-12345678`. Or, when the words do not match, the query
 * as the document's parser reads it.
 */
function toTsQuery(q: string): SQL | undefined {
  const words = (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 8);
  if (words.length === 0) return undefined;
  // Only a word with a digit can be read as a number; one without may be a stop word, which the
  // stemmed form drops and the word as it is would then require.
  const each = words.map((w) =>
    /\p{N}/u.test(w)
      ? sql`(to_tsquery('english', ${`${w}:*`}) || ${`'${w}':*`}::tsquery || ${`'-${w}':*`}::tsquery)`
      : sql`to_tsquery('english', ${`${w}:*`})`,
  );
  // Or the query parsed as a name is: its words as the document holds them ("w-12-6ba1f5" is `w`,
  // `-12`, `-6` and `ba1f5` there), each a prefix, so a whole name always finds itself.
  // Control characters (NUL above all) never reach the database; nor does a lone surrogate.
  const text = q.replace(/[\p{Cc}\p{Cs}]/gu, ' ');
  const asParsed = sql`(select coalesce(string_agg(quote_literal(lexeme) || ':*', ' & '), '') from unnest(to_tsvector('english', ${text})))::tsquery`;
  return sql`((${sql.join(each, sql` && `)}) || ${asParsed})`;
}

/** A number PostgreSQL's `real` holds (no overflow, no underflow error). */
function fitsReal(n: number): boolean {
  return n === 0 || (Number.isFinite(n) && Math.abs(n) >= 1e-37 && Math.abs(n) <= 1e37);
}

/** A signed integer that fits `bits` bits plus sign (int4: 31, int8: 63). */
function fitsInteger(value: string, bits: number): boolean {
  if (!/^-?\d{1,20}$/.test(value)) return false;
  const n = BigInt(value);
  return n >= -(2n ** BigInt(bits)) && n < 2n ** BigInt(bits);
}

function priceFilter(field: string, value: string): bigint {
  try {
    return priceToAtomic(value);
  } catch {
    throw new AppError('VALIDATION', `Invalid request: field "${field}": must be a USDC amount such as 0.01`);
  }
}

function addressFilter(value: string): string {
  if (!ADDRESS_PATTERN.test(value)) throw new AppError('VALIDATION', 'Invalid request: field "creator": must be a 0x address');
  return getAddress(value.toLowerCase());
}
