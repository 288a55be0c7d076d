/**
 * Reports and moderation: a signed-in account reports a skill or a creator; the marketplace's
 * operators (the wallets of OPERATOR_ADDRESSES) work the queue, hide skills and suspend creators,
 * always with a reason, and every one of their actions is an entry of an append-only audit log.
 */
import { type Static, Type as T } from '@sinclair/typebox';
import { AddressString, Cursor, Nullable, PageLimit, Timestamp, Uuid } from './common';

/**
 * What a report is about: the `category` of {@link PostReport}.
 *
 * @example
 * await registry.call(REGISTRY_ROUTES.postReport, { body: { skillSlug: 'weather-now', category: REPORT_CATEGORIES[0], text: 'Copies of my listings' } });
 */
export const REPORT_CATEGORIES = ['spam', 'scam', 'malware', 'illegal', 'impersonation', 'broken', 'other'] as const;
/** One of {@link REPORT_CATEGORIES}. */
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];
const Category = T.Union(
  [
    T.Literal('spam'),
    T.Literal('scam'),
    T.Literal('malware'),
    T.Literal('illegal'),
    T.Literal('impersonation'),
    T.Literal('broken'),
    T.Literal('other'),
  ],
  { description: 'what the report is about' },
);

/**
 * `POST /reports` body (a signed-in session): a report of the skill `skillSlug`, or of the creator
 * `creatorAddress` (exactly one of them), with a category and what is wrong. One open report per
 * reporter and skill (or creator): a second is 409; an account files at most
 * MARKET_REPORTS_PER_HOUR reports an hour (429 after).
 */
export const PostReport = T.Object({
  skillSlug: T.Optional(T.String({ minLength: 1, maxLength: 120 })),
  creatorAddress: T.Optional(AddressString('the reported creator')),
  category: Category,
  text: T.String({ minLength: 1, maxLength: 2000, description: 'what is wrong, in the reporter’s words' }),
});
/** The {@link PostReport} schema's type. */
export type PostReport = Static<typeof PostReport>;

/** A report as its reporter and the operators see it. */
export const ReportView = T.Object({
  id: Uuid(),
  /** null for a report of a creator. */
  skillSlug: Nullable(T.String()),
  creatorAddress: T.String(),
  category: Category,
  text: T.String(),
  status: T.Union([T.Literal('open'), T.Literal('dismissed'), T.Literal('actioned')]),
  createdAt: Timestamp(),
  closedAt: Nullable(Timestamp()),
});
/** The {@link ReportView} schema's type. */
export type ReportView = Static<typeof ReportView>;

/** One entry of the audit log: who did what to which target, when and why. */
export const AuditEntry = T.Object({
  seq: T.Integer({ minimum: 1, description: 'its place in the log' }),
  operatorAddress: T.String({ description: 'the operator’s wallet' }),
  action: T.Union([
    T.Literal('skill.hide'),
    T.Literal('skill.restore'),
    T.Literal('creator.suspend'),
    T.Literal('creator.restore'),
    T.Literal('report.dismiss'),
  ]),
  targetType: T.Union([T.Literal('skill'), T.Literal('creator'), T.Literal('report')]),
  targetId: Uuid(),
  targetLabel: T.String({ description: 'the skill’s slug, the creator’s address or the report’s id, as it was then' }),
  reason: T.String(),
  reportId: Nullable(Uuid(), 'the report acted on, when there was one'),
  createdAt: Timestamp(),
});
/** The {@link AuditEntry} schema's type. */
export type AuditEntry = Static<typeof AuditEntry>;
/** `GET /operator/audit` answer: newest first, one page (X-Next-Cursor for the next). */
export const AuditList = T.Array(AuditEntry);

/** A moderation decision's body: why, always; and the report it answers, if any (it is then closed as actioned). */
export const ModerationReason = T.Object({
  reason: T.String({ minLength: 1, maxLength: 1000, description: 'why: shown to the creator and kept in the audit log' }),
  reportId: T.Optional(Uuid('the report this acts on: closed as actioned')),
});
/** The {@link ModerationReason} schema's type. */
export type ModerationReason = Static<typeof ModerationReason>;

/** `POST /operator/reports/:id/dismiss` body. */
export const DismissReport = T.Object({ reason: ModerationReason.properties.reason });

/** Why a listing or an account is hidden, and since when. */
export const ModerationState = T.Object({ reason: T.String(), at: Timestamp() });
/** The {@link ModerationState} schema's type. */
export type ModerationState = Static<typeof ModerationState>;

/** A reported skill as the queue shows it: the listing, its health and its buyers. */
export const QueueSkill = T.Object({
  id: Uuid(),
  slug: T.String(),
  name: T.String(),
  endpoint: T.String(),
  isActive: T.Boolean(),
  hidden: Nullable(ModerationState),
  status: T.Union([T.Literal('unknown'), T.Literal('up'), T.Literal('down')], { description: 'the server’s health' }),
  lastUpAt: Nullable(Timestamp()),
  buyerCount: T.Integer({ minimum: 0 }),
  paidCallCount: T.Integer({ minimum: 0 }),
});

/** One report of the operators' queue, with what they need to decide. */
export const QueueItem = T.Object({
  report: T.Composite([ReportView, T.Object({ reporterAddress: T.String() })]),
  skill: Nullable(QueueSkill, 'null for a report of a creator, or a skill since gone'),
  creator: T.Object({ id: Uuid(), address: T.String(), suspended: Nullable(ModerationState) }),
  /** Earlier operator actions on this skill and this creator, newest first. */
  actions: T.Array(AuditEntry),
});
/** The {@link QueueItem} schema's type. */
export type QueueItem = Static<typeof QueueItem>;
/** `GET /operator/reports` answer: open reports oldest first, closed ones most recently closed first; one page (X-Next-Cursor). */
export const QueueList = T.Array(QueueItem);

/** `GET /operator/reports` query. */
export const QueueQuery = T.Object({
  status: T.Optional(T.Union([T.Literal('open'), T.Literal('closed')], { description: 'open (default) or closed reports' })),
  limit: T.Optional(PageLimit()),
  cursor: T.Optional(Cursor),
});

/**
 * A report as its reporter sees it: its status and `outcome`, the action that closed it
 * (`report.dismiss` when dismissed), never the operator's reason nor who decided.
 */
export const OwnReport = T.Composite([ReportView, T.Object({ outcome: Nullable(AuditEntry.properties.action) })]);
/** The {@link OwnReport} schema's type. */
export type OwnReport = Static<typeof OwnReport>;
/** `GET /reports/mine` answer: newest first, one page (X-Next-Cursor). */
export const OwnReportList = T.Array(OwnReport);

/** `GET /operator/audit` query. */
export const AuditQuery = T.Object({ limit: T.Optional(PageLimit()), cursor: T.Optional(Cursor) });

/** `GET /operator/audit/export` query: CSV (default) or JSON lines. */
export const AuditExportQuery = T.Object({
  format: T.Optional(T.Union([T.Literal('csv'), T.Literal('jsonl')], { description: 'csv (default) or jsonl' })),
});
/** The whole audit log, oldest first, as CSV (a header line, then one line per entry) or JSON lines. */
export const AuditExport = T.String({
  description:
    'CSV: seq,created_at,operator_address,action,target_type,target_id,target_label,reason,report_id; or one AuditEntry per line',
});

/** `GET /moderation/me`: the caller's standing: operator or not, suspended or not, and which of their skills are hidden. */
export const ModerationStanding = T.Object({
  operator: T.Boolean({ description: 'the caller signed in with an operator wallet' }),
  suspended: Nullable(ModerationState),
  hiddenSkills: T.Array(T.Object({ slug: T.String(), name: T.String(), reason: T.String(), at: Timestamp() })),
});
/** The {@link ModerationStanding} schema's type. */
export type ModerationStanding = Static<typeof ModerationStanding>;

/** Path parameter of the creator actions. */
export const CreatorAddressParam = T.Object({ address: AddressString() });
