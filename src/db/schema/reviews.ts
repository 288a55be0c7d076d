import { index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { skills } from './catalogue';
import { users } from './users';

/**
 * A buyer's review of a skill: one per account and skill (a second post updates it). Only an
 * account with a payment to the skill verified on chain may write one. The creator may reply once.
 */
export const reviews = pgTable(
  'reviews',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The reviewer's account wallet, shown as `consumerAddress`. */
    consumerAddress: text('consumer_address').notNull(),
    score: integer('score').notNull(),
    comment: text('comment'),
    reply: text('reply'),
    repliedAt: timestamp('replied_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('reviews_skill_user_key').on(t.skillId, t.userId),
    index('reviews_skill_newest_idx').on(t.skillId, t.createdAt, t.id),
  ],
);
