import { pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * A registry account: a wallet address, always stored EIP-55 checksummed (so equality is exact),
 * optionally linked to an identity-provider user.
 */
export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    walletAddress: text('wallet_address').notNull(),
    providerUserId: text('provider_user_id'),
    name: text('name'),
    avatar: text('avatar'),
    bio: text('bio'),
    /** Set while the operators suspend the account: its skills are hidden and its writes refused (it may still sign in and read why). */
    suspendedAt: timestamp('suspended_at', { withTimezone: true }),
    suspendedReason: text('suspended_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('users_wallet_address_key').on(t.walletAddress), uniqueIndex('users_provider_user_id_key').on(t.providerUserId)],
);
