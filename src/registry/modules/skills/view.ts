import { eq, getTableColumns, inArray, sql } from 'drizzle-orm';
import { formatPrice, formatPriceUsd } from 'skill-market/x402';
import type { Database } from '../../../db';
import { serverHealth, skillGroupMembers, skillGroups, skills, skillStats, users } from '../../../db/schema';
import { prepared } from '../../lib/prepared';
import { averageStars } from '../reviews';
import type { SkillView } from 'skill-market/registry';
import { type ChainConfig, tokenDecimals } from '../../../config/chain';

/** The registry's token: revenue is counted in its atomic units. */
type TokenOf = Pick<ChainConfig, 'network' | 'usdcDecimals'>;

type SkillRow = Omit<typeof skills.$inferSelect, 'search'>;
type StatsRow = typeof skillStats.$inferSelect;
type HealthRow = {
  status: 'unknown' | 'up' | 'down' | null;
  latencyMs: number | null;
  lastUpAt: Date | null;
  uptimePpm: number | null;
  recentSuccessPpm: number | null;
} | null;

/** Every skill column but the full-text document, which only the database needs. */
const { search: _search, ...skillFields } = getTableColumns(skills);

/** The columns every skill listing selects: the skill, its counters, its creator, its server's health, its group names. */
const skillColumns = {
  skill: skillFields,
  stats: skillStats,
  creatorAddress: users.walletAddress,
  /** When the creator was suspended (their skills are then hidden), or null. */
  creatorSuspendedAt: users.suspendedAt,
  health: {
    status: serverHealth.status,
    latencyMs: serverHealth.latencyMs,
    lastUpAt: serverHealth.lastUpAt,
    uptimePpm: serverHealth.uptimePpm,
    recentSuccessPpm: serverHealth.recentSuccessPpm,
  },
  groups: sql<
    string[]
  >`(select coalesce(array_agg(g.name order by g.name), '{}') from ${skillGroupMembers} m join ${skillGroups} g on g.id = m.group_id where m.skill_id = ${skills.id})`,
};

/** `select … from skills` joined to its counters and creator, ready for filters. */
export function selectSkills(db: Database) {
  return db
    .select(skillColumns)
    .from(skills)
    .innerJoin(skillStats, eq(skillStats.skillId, skills.id))
    .innerJoin(users, eq(users.id, skills.creatorId))
    .leftJoin(serverHealth, eq(serverHealth.serverUrl, skills.serverUrl));
}

/** A listing as answered; its revenue text in the decimals of the token the skill is paid in (`chain`). */
export function toSkillView(
  row: {
    skill: SkillRow;
    stats: StatsRow;
    creatorAddress: string;
    health: HealthRow;
    groups: string[] | string;
  },
  chain: TokenOf,
): SkillView {
  const { skill, stats } = row;
  return {
    id: skill.id,
    slug: skill.slug,
    name: skill.name,
    description: skill.description,
    price: formatPriceUsd(skill.priceAtomic),
    priceUsdc: formatPrice(skill.priceAtomic),
    priceAtomic: skill.priceAtomic.toString(),
    currency: 'USDC',
    usageBased: skill.usageBased,
    trial: skill.trial ?? null,
    tiers: skill.tiers
      ? {
          period: skill.tiers.period,
          steps: skill.tiers.steps.map((step) => ({
            after: step.after,
            price: formatPriceUsd(BigInt(step.priceAtomic)),
            priceAtomic: step.priceAtomic,
          })),
        }
      : null,
    network: skill.network,
    endpoint: skill.endpoint,
    paymentAddress: skill.paymentAddress,
    receiptSigner: skill.receiptSigner,
    inputSchema: (skill.inputSchema as Record<string, unknown> | null) ?? null,
    outputSchema: (skill.outputSchema as Record<string, unknown> | null) ?? null,
    category: skill.category,
    groups: parseTextArray(row.groups),
    isActive: skill.isActive,
    verified: skill.verified,
    creatorId: skill.creatorId,
    creatorAddress: row.creatorAddress,
    ...observedFields(stats, row.health, tokenDecimals(chain, skill.network)),
    createdAt: skill.createdAt.toISOString(),
    updatedAt: skill.updatedAt.toISOString(),
  };
}

/** The fields of a listing that change without notice: counters, rating, the server's health. */
export type ObservedFields = Pick<
  SkillView,
  | 'callCount'
  | 'paidCallCount'
  | 'trialCallCount'
  | 'buyerCount'
  | 'repeatBuyerCount'
  | 'viewCount'
  | 'favoriteCount'
  | 'rating'
  | 'reviewCount'
  | 'totalRevenueAtomic'
  | 'totalRevenue'
  | 'status'
  | 'latencyMs'
  | 'lastUpAt'
  | 'uptime'
  | 'recentSuccessRate'
>;

/** A share kept in parts per million, as a number 0–1 (null stays null). */
const share = (ppm: number | null | undefined) => (ppm == null ? null : ppm / 1_000_000);

function observedFields(stats: StatsRow, health: HealthRow, decimals: number): ObservedFields {
  return {
    callCount: stats.callCount,
    paidCallCount: stats.paidCallCount,
    trialCallCount: stats.trialCallCount,
    buyerCount: stats.buyerCount,
    repeatBuyerCount: stats.repeatBuyerCount,
    viewCount: stats.viewCount,
    favoriteCount: stats.favoriteCount,
    rating: averageStars(stats.ratingSum, stats.reviewCount),
    reviewCount: stats.reviewCount,
    totalRevenueAtomic: BigInt(stats.totalRevenue).toString(),
    totalRevenue: formatPrice(BigInt(stats.totalRevenue), decimals),
    status: health?.status ?? 'unknown',
    latencyMs: health?.latencyMs ?? null,
    lastUpAt: health?.lastUpAt?.toISOString() ?? null,
    uptime: share(health?.uptimePpm),
    recentSuccessRate: share(health?.recentSuccessPpm),
  };
}

/** The observed fields of these skills, in one statement (a read cache's refresh); a skill not there is gone. */
export async function readObservedFields(db: Database, ids: string[], chain: TokenOf): Promise<Map<string, ObservedFields>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ stats: skillStats, health: skillColumns.health, network: skills.network })
    .from(skillStats)
    .innerJoin(skills, eq(skills.id, skillStats.skillId))
    .leftJoin(serverHealth, eq(serverHealth.serverUrl, skills.serverUrl))
    .where(inArray(skillStats.skillId, ids));
  return new Map(rows.map((r) => [r.stats.skillId, observedFields(r.stats, r.health, tokenDecimals(chain, r.network))]));
}

/** A text[] from either driver: an array, or PostgreSQL's `{a,"b c"}` text form. */
function parseTextArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.slice(1, -1);
  if (inner === '') return [];
  return (inner.match(/"((?:[^"\\]|\\.)*)"|[^,]+/g) ?? []).map((part) =>
    part.startsWith('"') ? part.slice(1, -1).replace(/\\(.)/g, '$1') : part,
  );
}

/** One skill row by slug through a prepared statement (the hottest read: skill detail). */
export async function findSkillRowBySlug(db: Database, slug: string) {
  const statement = prepared(db, 'skill_by_slug', (d) =>
    selectSkills(d)
      .where(eq(skills.slug, sql.placeholder('slug')))
      .prepare('skill_by_slug'),
  );
  const [row] = await statement.execute({ slug });
  return row;
}
