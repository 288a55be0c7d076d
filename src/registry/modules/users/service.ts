import { eq } from 'drizzle-orm';
import { getAddress } from 'viem';
import { users } from '../../../db/schema';
import { AppError } from '../../../http';
import type { ServiceContext } from '../../context';
import type { Creator, ProfileUpdate } from 'skill-market/registry';

export type User = typeof users.$inferSelect;

export function toCreator(user: User): Creator {
  return {
    id: user.id,
    walletAddress: user.walletAddress,
    name: user.name,
    avatar: user.avatar,
    bio: user.bio,
    createdAt: user.createdAt.toISOString(),
  };
}

/** The user owning `address` (any case), created on first sign-in. Safe under concurrent sign-ins. */
export async function findOrCreateByWallet(ctx: ServiceContext, address: string): Promise<User> {
  const walletAddress = getAddress(address);
  const now = ctx.clock.now();
  const [created] = await ctx.db
    .insert(users)
    .values({ walletAddress, createdAt: now, updatedAt: now })
    .onConflictDoNothing({ target: users.walletAddress })
    .returning();
  if (created) return created;
  const existing = await ctx.db.query.users.findFirst({ where: eq(users.walletAddress, walletAddress) });
  if (!existing) throw new Error(`user for ${walletAddress} vanished during sign-in`);
  return existing;
}

/**
 * The user for an identity-provider account. A provider user whose wallet already has an account
 * (from wallet sign-in) is linked to it; the wallet of an existing provider user is kept.
 */
export async function findOrCreateByProvider(ctx: ServiceContext, providerUserId: string, wallet: string | undefined): Promise<User> {
  const linked = await ctx.db.query.users.findFirst({ where: eq(users.providerUserId, providerUserId) });
  if (linked) return linked;
  if (!wallet) throw new AppError('VALIDATION', 'The provider account has no linked wallet');
  const user = await findOrCreateByWallet(ctx, wallet);
  if (user.providerUserId === null) {
    const [updated] = await ctx.db
      .update(users)
      .set({ providerUserId, updatedAt: ctx.clock.now() })
      .where(eq(users.id, user.id))
      .returning();
    return updated ?? user;
  }
  if (user.providerUserId !== providerUserId) {
    throw new AppError('CONFLICT', 'This wallet is linked to another provider account');
  }
  return user;
}

export async function getUserById(ctx: ServiceContext, id: string): Promise<User | undefined> {
  return ctx.db.query.users.findFirst({ where: eq(users.id, id) });
}

export async function getCreatorByAddress(ctx: ServiceContext, address: string): Promise<Creator> {
  const user = await ctx.db.query.users.findFirst({ where: eq(users.walletAddress, getAddress(address.toLowerCase())) });
  if (!user) throw new AppError('NOT_FOUND', 'Creator not found');
  return toCreator(user);
}

export async function updateProfile(ctx: ServiceContext, userId: string, update: ProfileUpdate): Promise<Creator> {
  const [user] = await ctx.db
    .update(users)
    .set({ ...update, updatedAt: ctx.clock.now() })
    .where(eq(users.id, userId))
    .returning();
  if (!user) throw new AppError('NOT_FOUND', 'Creator not found');
  return toCreator(user);
}
