import { sql } from 'drizzle-orm';
import { bigserial, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { skills } from './catalogue';
import { users } from './users';

/**
 * A signed-in account's report of a skill (`skill_id`) or of a creator (`creator_id` alone). One
 * open report per reporter and skill (or creator); an operator closes it, dismissing it or
 * acting on it.
 */
export const reports = pgTable(
  'reports',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    reporterId: uuid('reporter_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    skillId: uuid('skill_id').references(() => skills.id, { onDelete: 'cascade' }),
    /** The reported creator: the skill's creator for a skill report. */
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    category: text('category').$type<'spam' | 'scam' | 'malware' | 'illegal' | 'impersonation' | 'broken' | 'other'>().notNull(),
    text: text('text').notNull(),
    status: text('status').$type<'open' | 'dismissed' | 'actioned'>().notNull().default('open'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('reports_open_skill_key').on(t.reporterId, t.skillId).where(sql`status = 'open' and skill_id is not null`),
    uniqueIndex('reports_open_creator_key').on(t.reporterId, t.creatorId).where(sql`status = 'open' and skill_id is null`),
    index('reports_status_idx').on(t.status, t.createdAt),
    index('reports_reporter_idx').on(t.reporterId, t.createdAt),
  ],
);

/**
 * The operators' audit log: who did what to which target, when and why. Append-only: the code has
 * no path that changes or removes a row, and a trigger (migration) refuses UPDATE, DELETE and
 * TRUNCATE. No foreign keys: an entry outlives whatever it names.
 */
export const moderationActions = pgTable(
  'moderation_actions',
  {
    /** Its place in the log: entries are read and exported in this order. */
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    operatorId: uuid('operator_id').notNull(),
    operatorAddress: text('operator_address').notNull(),
    action: text('action').$type<'skill.hide' | 'skill.restore' | 'creator.suspend' | 'creator.restore' | 'report.dismiss'>().notNull(),
    /** `skill`, `creator` or `report`. */
    targetType: text('target_type').$type<'skill' | 'creator' | 'report'>().notNull(),
    targetId: uuid('target_id').notNull(),
    /** What the target was called then: a skill's slug, a creator's address, a report's id. */
    targetLabel: text('target_label').notNull(),
    reason: text('reason').notNull(),
    /** The report acted on, when the action came from the queue. */
    reportId: uuid('report_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('moderation_actions_target_idx').on(t.targetId, t.seq),
    // A reporter's list reads the action that closed each of their reports.
    index('moderation_actions_report_idx').on(t.reportId, t.seq).where(sql`report_id is not null`),
  ],
);
