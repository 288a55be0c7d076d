/**
 * Reports: any signed-in account reports a skill or a creator; the operators read them as a queue
 * with what they need to decide (the listing, its health, its buyers, earlier actions) and close
 * them, by a decision (decisions.ts) or by dismissing them.
 */
import { and, asc, count, desc, eq, gt, gte, lt, ne, or, sql } from 'drizzle-orm';
import { getAddress } from 'viem';
import type { AuditEntry, PostReport, QueueItem, QueueQuery, ReportView } from 'skill-market/registry';
import type { Static } from '@sinclair/typebox';
import { reports, serverHealth, skills, skillStats, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { decodeCursor, encodeCursor, isIsoInstant } from '../../lib/cursor';
import { actionsOn, appendEntry } from './audit';
import { type Operator, reasonOf } from './operators';

type ReportRow = typeof reports.$inferSelect;

export function toReportView(row: ReportRow, skillSlug: string | null, creatorAddress: string): ReportView {
  return {
    id: row.id,
    skillSlug,
    creatorAddress,
    category: row.category,
    text: row.text,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    closedAt: row.closedAt?.toISOString() ?? null,
  };
}

/** Reports count against their reporter for this long. */
const RATE_WINDOW_MS = 3_600_000;

/**
 * Files the caller's report. 400 without exactly one target, 404 for an unknown (or hidden from
 * them) target, 409 when the caller's earlier report of it is still open, 429 past the hourly limit.
 */
export async function postReport(ctx: ServiceContext, reporterId: string, input: PostReport): Promise<ReportView> {
  if ((input.skillSlug === undefined) === (input.creatorAddress === undefined)) {
    throw new AppError('VALIDATION', 'Invalid request: report exactly one of "skillSlug" or "creatorAddress"');
  }
  const text = input.text.trim();
  if (text === '') throw new AppError('VALIDATION', 'Invalid request: field "text": must say what is wrong');
  const target = input.skillSlug !== undefined ? await skillTarget(ctx, input.skillSlug) : await creatorTarget(ctx, input.creatorAddress!);
  if (target.creatorId === reporterId) throw new AppError('VALIDATION', 'Invalid request: you cannot report yourself');
  const now = ctx.clock.now();
  const row = await ctx.db.transaction(async (tx) => {
    // One report at a time per reporter: the count below and the insert see each other's.
    await tx.select({ id: users.id }).from(users).where(eq(users.id, reporterId)).for('no key update');
    const [recent] = await tx
      .select({ n: count() })
      .from(reports)
      .where(and(eq(reports.reporterId, reporterId), gte(reports.createdAt, new Date(now.getTime() - RATE_WINDOW_MS))));
    const limit = ctx.config.moderation.reportsPerHour;
    if ((recent?.n ?? 0) >= limit) throw new AppError('RATE_LIMITED', `Too many reports: at most ${limit} an hour; try again later`);
    const [inserted] = await tx
      .insert(reports)
      .values({ reporterId, skillId: target.skillId, creatorId: target.creatorId, category: input.category, text, createdAt: now })
      .onConflictDoNothing()
      .returning();
    if (!inserted) {
      throw new AppError(
        'CONFLICT',
        `You already have an open report of this ${target.skillId ? 'skill' : 'creator'}: the operators will read it`,
      );
    }
    return inserted;
  });
  return toReportView(row, target.skillSlug, target.creatorAddress);
}

interface Target {
  skillId: string | null;
  skillSlug: string | null;
  creatorId: string;
  creatorAddress: string;
}

async function skillTarget(ctx: ServiceContext, slug: string): Promise<Target> {
  const [found] = await ctx.db
    .select({ id: skills.id, slug: skills.slug, creatorId: skills.creatorId, address: users.walletAddress })
    .from(skills)
    .innerJoin(users, eq(users.id, skills.creatorId))
    .where(eq(skills.slug, slug));
  if (!found) throw new AppError('NOT_FOUND', 'Skill not found');
  return { skillId: found.id, skillSlug: found.slug, creatorId: found.creatorId, creatorAddress: found.address };
}

async function creatorTarget(ctx: ServiceContext, address: string): Promise<Target> {
  const walletAddress = getAddress(address.toLowerCase());
  const [found] = await ctx.db.select({ id: users.id }).from(users).where(eq(users.walletAddress, walletAddress));
  if (!found) throw new AppError('NOT_FOUND', 'Creator not found');
  return { skillId: null, skillSlug: null, creatorId: found.id, creatorAddress: walletAddress };
}

/**
 * One page of the operators' queue, each report with its context: open reports oldest first,
 * closed ones most recently closed first; keyset paged on (created_at, id) or (closed_at, id).
 */
export async function reportQueue(
  ctx: ServiceContext,
  query: Static<typeof QueueQuery>,
): Promise<{ items: QueueItem[]; nextCursor: string | undefined }> {
  const open = (query.status ?? 'open') === 'open';
  const limit = query.limit ?? 50;
  const after = query.cursor ? decodeCursor(query.cursor, isIsoInstant) : undefined;
  const at = after && new Date(after[0]);
  const past = !after
    ? undefined
    : open
      ? or(gt(reports.createdAt, at!), and(eq(reports.createdAt, at!), gt(reports.id, after[1])))
      : or(lt(reports.closedAt, at!), and(eq(reports.closedAt, at!), gt(reports.id, after[1])));
  const reporter = sql<string>`(select ${users.walletAddress} from ${users} where ${users.id} = ${reports.reporterId})`;
  const rows = await ctx.db
    .select({
      report: reports,
      reporterAddress: reporter,
      creator: { id: users.id, address: users.walletAddress, suspendedAt: users.suspendedAt, suspendedReason: users.suspendedReason },
      skill: {
        id: skills.id,
        slug: skills.slug,
        name: skills.name,
        endpoint: skills.endpoint,
        isActive: skills.isActive,
        hiddenAt: skills.hiddenAt,
        hiddenReason: skills.hiddenReason,
      },
      stats: { buyerCount: skillStats.buyerCount, paidCallCount: skillStats.paidCallCount },
      health: { status: serverHealth.status, lastUpAt: serverHealth.lastUpAt },
    })
    .from(reports)
    .innerJoin(users, eq(users.id, reports.creatorId))
    .leftJoin(skills, eq(skills.id, reports.skillId))
    .leftJoin(skillStats, eq(skillStats.skillId, reports.skillId))
    .leftJoin(serverHealth, eq(serverHealth.serverUrl, skills.serverUrl))
    .where(and(open ? eq(reports.status, 'open') : ne(reports.status, 'open'), past))
    .orderBy(open ? asc(reports.createdAt) : desc(reports.closedAt), asc(reports.id))
    .limit(limit + 1);
  const more = rows.length > limit;
  rows.splice(limit);
  const last = rows.at(-1)?.report;
  const lastAt = open ? last?.createdAt : last?.closedAt;
  const nextCursor = more && last && lastAt ? encodeCursor(lastAt.toISOString(), last.id) : undefined;
  const targets = [...new Set(rows.flatMap((r) => [r.creator.id, ...(r.skill?.id ? [r.skill.id] : [])]))];
  const actions = await actionsOn(ctx.db, targets);
  const newestFirst = (a: AuditEntry, b: AuditEntry) => b.seq - a.seq;
  const items = rows.map((r) => ({
    report: { ...toReportView(r.report, r.skill?.slug ?? null, r.creator.address), reporterAddress: r.reporterAddress },
    skill: r.skill
      ? {
          id: r.skill.id,
          slug: r.skill.slug,
          name: r.skill.name,
          endpoint: r.skill.endpoint,
          isActive: r.skill.isActive,
          hidden: r.skill.hiddenAt ? { reason: r.skill.hiddenReason ?? '', at: r.skill.hiddenAt.toISOString() } : null,
          status: r.health?.status ?? 'unknown',
          lastUpAt: r.health?.lastUpAt?.toISOString() ?? null,
          buyerCount: r.stats?.buyerCount ?? 0,
          paidCallCount: r.stats?.paidCallCount ?? 0,
        }
      : null,
    creator: {
      id: r.creator.id,
      address: r.creator.address,
      suspended: r.creator.suspendedAt ? { reason: r.creator.suspendedReason ?? '', at: r.creator.suspendedAt.toISOString() } : null,
    },
    actions: [...(r.skill ? (actions.get(r.skill.id) ?? []) : []), ...(actions.get(r.creator.id) ?? [])].sort(newestFirst),
  }));
  return { items, nextCursor };
}

/** Closes an open report without action; 404 unknown, 409 already closed. */
export async function dismissReport(ctx: ServiceContext, operator: Operator, reportId: string, rawReason: string): Promise<AuditEntry> {
  const reason = reasonOf(rawReason);
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    const [report] = await tx.select().from(reports).where(eq(reports.id, reportId)).for('update');
    if (!report) throw new AppError('NOT_FOUND', 'Report not found');
    if (report.status !== 'open') throw new AppError('CONFLICT', 'This report is already closed');
    await tx.update(reports).set({ status: 'dismissed', closedAt: now }).where(eq(reports.id, reportId));
    return appendEntry(
      tx,
      operator,
      { action: 'report.dismiss', targetType: 'report', targetId: report.id, targetLabel: report.id, reason, reportId: report.id },
      now,
    );
  });
}
