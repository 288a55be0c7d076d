import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Sign-In with Ethereum challenges: the exact message issued, single use, short-lived. */
export const authChallenges = pgTable(
  'auth_challenges',
  {
    nonce: text('nonce').primaryKey(),
    address: text('address').notNull(),
    message: text('message').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('auth_challenges_address_idx').on(t.address, t.createdAt)],
);
