import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users';

/**
 * Spending wallets: self-custody addresses a consumer pays from. Only the public address is kept
 * (EIP-55 checksummed, so equality is exact); keys never reach the registry. An address belongs
 * to one user for good, revoked or not. At most one wallet per user is active. Only a proven
 * wallet (`proven_at`) makes its payments the user's for reviews.
 */
export const wallets = pgTable(
  'wallets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    address: text('address').notNull(),
    label: text('label'),
    isActive: boolean('is_active').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    /** When the user proved control of the key (a signature of a registry-issued message); null if never. */
    provenAt: timestamp('proven_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('wallets_address_key').on(t.address),
    index('wallets_user_id_idx').on(t.userId),
    uniqueIndex('wallets_one_active_per_user').on(t.userId).where(sql`${t.isActive}`),
  ],
);
