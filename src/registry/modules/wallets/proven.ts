/**
 * The addresses an account has proven it holds the key of: the wallet it signs in with (a signed
 * challenge, or the sign-in provider's verified wallet) and every wallet registered with a proof
 * (proof.ts). Only these can be a skill's payment address: a listing can never name another
 * account's address and earn what is paid to it.
 */
import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import type { Database } from '../../../db';
import { users, wallets } from '../../../db/schema';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/** Each account's proven addresses, lower case; an account with none maps to an empty set. */
export async function provenAddresses(db: Database | Tx, userIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const proven = new Map(userIds.map((id) => [id, new Set<string>()]));
  if (userIds.length === 0) return proven;
  const ids = [...proven.keys()];
  // One statement: the sign-in wallets, then the wallets registered with a proof.
  const rows = await db
    .select({ userId: users.id, address: users.walletAddress })
    .from(users)
    .where(inArray(users.id, ids))
    .unionAll(
      db
        .select({ userId: wallets.userId, address: wallets.address })
        .from(wallets)
        .where(and(inArray(wallets.userId, ids), isNotNull(wallets.provenAt))),
    );
  for (const { userId, address } of rows) proven.get(userId)?.add(address.toLowerCase());
  return proven;
}

/** Whether `userId` has proven holding `address`. */
export async function hasProven(db: Database | Tx, userId: string, address: string): Promise<boolean> {
  const lower = address.toLowerCase();
  const [user] = await db.select({ address: users.walletAddress }).from(users).where(eq(users.id, userId));
  if (user?.address.toLowerCase() === lower) return true;
  const rows = await db
    .select({ address: wallets.address })
    .from(wallets)
    .where(and(eq(wallets.userId, userId), isNotNull(wallets.provenAt)));
  return rows.some((r) => r.address.toLowerCase() === lower);
}
