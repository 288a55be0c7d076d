/**
 * The operators' audit log: entries are appended in the transaction of the decision they record,
 * and never changed nor removed (no code path here does; the database refuses it too).
 */
import { asc, desc, gt, inArray, lt } from 'drizzle-orm';
import type { AuditEntry, AuditQuery } from 'skill-market/registry';
import type { Static } from '@sinclair/typebox';
import type { Database } from '../../../db';
import { moderationActions } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { decodeCursor, encodeCursor } from '../../lib/cursor';
import type { Operator } from './operators';

type Row = typeof moderationActions.$inferSelect;
type Writer = Pick<Database, 'insert'>;

export type NewEntry = Pick<Row, 'action' | 'targetType' | 'targetId' | 'targetLabel' | 'reason'> & { reportId?: string | null };

function toAuditEntry(row: Row): AuditEntry {
  return {
    seq: row.seq,
    operatorAddress: row.operatorAddress,
    action: row.action,
    targetType: row.targetType,
    targetId: row.targetId,
    targetLabel: row.targetLabel,
    reason: row.reason,
    reportId: row.reportId,
    createdAt: row.createdAt.toISOString(),
  };
}

/** Appends one entry (with `db`, the decision's transaction) and answers it. */
export async function appendEntry(db: Writer, operator: Operator, entry: NewEntry, at: Date): Promise<AuditEntry> {
  const [row] = await db
    .insert(moderationActions)
    .values({ ...entry, reportId: entry.reportId ?? null, operatorId: operator.id, operatorAddress: operator.address, createdAt: at })
    .returning();
  if (!row) throw new Error('audit insert returned nothing');
  return toAuditEntry(row);
}

/** One page of the log, newest first. */
export async function listAudit(
  ctx: ServiceContext,
  query: Static<typeof AuditQuery>,
): Promise<{ entries: AuditEntry[]; nextCursor: string | undefined }> {
  const limit = query.limit ?? 50;
  const before = query.cursor ? Number(decodeCursor(query.cursor, (v) => /^\d{1,15}$/.test(v))[0]) : undefined;
  const rows = await ctx.db
    .select()
    .from(moderationActions)
    .where(before === undefined ? undefined : lt(moderationActions.seq, before))
    .orderBy(desc(moderationActions.seq))
    .limit(limit + 1);
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    entries: shown.map(toAuditEntry),
    nextCursor: rows.length > limit && last ? encodeCursor(String(last.seq), last.targetId) : undefined,
  };
}

/** Earlier actions on any of these targets (skills, creators), newest first. */
export async function actionsOn(db: Database, targetIds: string[]): Promise<Map<string, AuditEntry[]>> {
  const byTarget = new Map<string, AuditEntry[]>();
  if (targetIds.length === 0) return byTarget;
  const rows = await db
    .select()
    .from(moderationActions)
    .where(inArray(moderationActions.targetId, targetIds))
    .orderBy(desc(moderationActions.seq));
  for (const row of rows) byTarget.set(row.targetId, [...(byTarget.get(row.targetId) ?? []), toAuditEntry(row)]);
  return byTarget;
}

const CSV_COLUMNS = [
  'seq',
  'created_at',
  'operator_address',
  'action',
  'target_type',
  'target_id',
  'target_label',
  'reason',
  'report_id',
] as const;

/** A CSV field: quoted when it holds a comma, quote or line break; a leading =, +, - or @ is defused for spreadsheets. */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

const EXPORT_PAGE = 1000;

/** The whole log, oldest first, read in pages of 1000: CSV with a header line, or one JSON entry per line. */
export async function exportAudit(ctx: ServiceContext, format: 'csv' | 'jsonl'): Promise<string> {
  const lines: string[] = format === 'csv' ? [CSV_COLUMNS.join(',')] : [];
  let after = 0;
  for (;;) {
    const rows = await ctx.db
      .select()
      .from(moderationActions)
      .where(gt(moderationActions.seq, after))
      .orderBy(asc(moderationActions.seq))
      .limit(EXPORT_PAGE);
    for (const row of rows) {
      const entry = toAuditEntry(row);
      lines.push(
        format === 'jsonl'
          ? JSON.stringify(entry)
          : [
              String(entry.seq),
              entry.createdAt,
              entry.operatorAddress,
              entry.action,
              entry.targetType,
              entry.targetId,
              entry.targetLabel,
              entry.reason,
              entry.reportId ?? '',
            ]
              .map(csvField)
              .join(','),
      );
    }
    if (rows.length < EXPORT_PAGE) break;
    after = rows.at(-1)!.seq;
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}
