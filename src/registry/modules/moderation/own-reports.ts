/**
 * A reporter's own reports with what became of them. The reporter sees the status and the action
 * that closed a report (its `outcome`: the skill hidden, the creator suspended, or the report
 * dismissed), never the operator's reason nor which operator: a decision's reason is written to the
 * creator and a dismissal's is the operators' note in their audit log.
 */
import { and, asc, desc, eq, gt, inArray, lt, or } from 'drizzle-orm';
import type { AuditQuery, OwnReport } from 'skill-market/registry';
import type { Static } from '@sinclair/typebox';
import { moderationActions, reports, skills, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { decodeCursor, encodeCursor, isIsoInstant } from '../../lib/cursor';
import { toReportView } from './reports';

/** One page of the caller's reports, newest first; keyset paged on (created_at, id). */
export async function ownReports(
  ctx: ServiceContext,
  reporterId: string,
  query: Static<typeof AuditQuery>,
): Promise<{ items: OwnReport[]; nextCursor: string | undefined }> {
  const limit = query.limit ?? 50;
  const after = query.cursor ? decodeCursor(query.cursor, isIsoInstant) : undefined;
  const at = after && new Date(after[0]);
  const rows = await ctx.db
    .select({ report: reports, skillSlug: skills.slug, creatorAddress: users.walletAddress })
    .from(reports)
    .innerJoin(users, eq(users.id, reports.creatorId))
    .leftJoin(skills, eq(skills.id, reports.skillId))
    .where(
      and(
        eq(reports.reporterId, reporterId),
        after ? or(lt(reports.createdAt, at!), and(eq(reports.createdAt, at!), gt(reports.id, after[1]))) : undefined,
      ),
    )
    .orderBy(desc(reports.createdAt), asc(reports.id))
    .limit(limit + 1);
  const more = rows.length > limit;
  rows.splice(limit);
  // The first action that named a closed report is the one that closed it.
  const closed = rows.filter((r) => r.report.status !== 'open').map((r) => r.report.id);
  const outcomes = new Map<string, OwnReport['outcome']>();
  if (closed.length > 0) {
    const actions = await ctx.db
      .select({ reportId: moderationActions.reportId, action: moderationActions.action })
      .from(moderationActions)
      .where(inArray(moderationActions.reportId, closed))
      .orderBy(asc(moderationActions.seq));
    for (const a of actions) if (a.reportId && !outcomes.has(a.reportId)) outcomes.set(a.reportId, a.action);
  }
  const last = rows.at(-1)?.report;
  return {
    items: rows.map((r) => ({
      ...toReportView(r.report, r.skillSlug, r.creatorAddress),
      outcome: outcomes.get(r.report.id) ?? null,
    })),
    nextCursor: more && last ? encodeCursor(last.createdAt.toISOString(), last.id) : undefined,
  };
}
