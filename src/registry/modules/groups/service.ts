import { and, asc, eq, sql } from 'drizzle-orm';
import { getAddress } from 'viem';
import { skillGroupMembers, skillGroups, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { slugify, withUniqueSlug } from '../../lib/slug';
import type { CreateGroup, GroupView, UpdateGroup } from 'skill-market/registry';

type GroupRow = typeof skillGroups.$inferSelect;

export function toGroupView(row: GroupRow): GroupView {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    icon: row.icon,
    creatorId: row.creatorId,
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function checkIcon(icon: string | null | undefined): void {
  if (icon == null) return;
  const isUrl = /^https?:\/\//i.test(icon);
  if (!isUrl && [...icon].length > 8) throw new AppError('VALIDATION', 'Invalid icon: use an emoji or an http(s) image URL');
  if (isUrl && !URL.canParse(icon)) throw new AppError('VALIDATION', 'Invalid icon: not a valid URL');
}

export async function createGroup(ctx: ServiceContext, creatorId: string, input: CreateGroup): Promise<GroupView> {
  checkIcon(input.icon);
  const name = input.name.trim();
  await assertNameFree(ctx, creatorId, name);
  const now = ctx.clock.now();
  const row = await withUniqueSlug(slugify(name), async (slug) => {
    const [inserted] = await ctx.db
      .insert(skillGroups)
      .values({ creatorId, slug, name, description: input.description ?? null, icon: input.icon ?? null, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .returning();
    if (!inserted) await assertNameFree(ctx, creatorId, name);
    return inserted;
  });
  return toGroupView(row);
}

async function assertNameFree(ctx: ServiceContext, creatorId: string, name: string, exceptId?: string): Promise<void> {
  const [clash] = await ctx.db
    .select({ id: skillGroups.id })
    .from(skillGroups)
    .where(and(eq(skillGroups.creatorId, creatorId), sql`lower(${skillGroups.name}) = lower(${name})`));
  if (clash && clash.id !== exceptId) throw new AppError('CONFLICT', `You already have a group named "${name}"`);
}

/** Public listing, optionally of one creator (by wallet address). */
export async function listGroups(ctx: ServiceContext, creatorAddress?: string): Promise<GroupView[]> {
  const rows = await ctx.db
    .select({ group: skillGroups })
    .from(skillGroups)
    .innerJoin(users, eq(users.id, skillGroups.creatorId))
    .where(creatorAddress ? eq(users.walletAddress, getAddress(creatorAddress.toLowerCase())) : undefined)
    .orderBy(asc(skillGroups.name), asc(skillGroups.id));
  return rows.map((r) => toGroupView(r.group));
}

/** A group by slug; with `creatorAddress`, only if that creator owns it. */
async function getGroupRow(ctx: ServiceContext, slug: string, creatorAddress?: string): Promise<GroupRow> {
  const [found] = await ctx.db
    .select({ group: skillGroups, wallet: users.walletAddress })
    .from(skillGroups)
    .innerJoin(users, eq(users.id, skillGroups.creatorId))
    .where(eq(skillGroups.slug, slug));
  if (!found || (creatorAddress && found.wallet.toLowerCase() !== creatorAddress.toLowerCase())) {
    throw new AppError('NOT_FOUND', 'Group not found');
  }
  return found.group;
}

async function ownedGroup(ctx: ServiceContext, creatorId: string, slug: string): Promise<GroupRow> {
  const group = await getGroupRow(ctx, slug);
  if (group.creatorId !== creatorId) throw new AppError('FORBIDDEN', 'Only the group’s creator can change it');
  return group;
}

export async function updateGroup(ctx: ServiceContext, creatorId: string, slug: string, input: UpdateGroup): Promise<GroupView> {
  const group = await ownedGroup(ctx, creatorId, slug);
  checkIcon(input.icon);
  const name = input.name?.trim();
  if (name !== undefined) await assertNameFree(ctx, creatorId, name, group.id);
  const [row] = await ctx.db
    .update(skillGroups)
    .set({
      ...(name !== undefined ? { name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.icon !== undefined ? { icon: input.icon } : {}),
      updatedAt: ctx.clock.now(),
    })
    .where(eq(skillGroups.id, group.id))
    .returning();
  ctx.reads?.clear(); // its skills' listings name it
  return toGroupView(row!);
}

/** Deletes a group no skill uses; otherwise 409. */
export async function deleteGroup(ctx: ServiceContext, creatorId: string, slug: string): Promise<void> {
  const group = await ownedGroup(ctx, creatorId, slug);
  await ctx.db.transaction(async (tx) => {
    const [used] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(skillGroupMembers)
      .where(eq(skillGroupMembers.groupId, group.id));
    if ((used?.n ?? 0) > 0) throw new AppError('CONFLICT', `Group "${group.name}" is used by ${used!.n} skill(s); move them first`);
    await tx.delete(skillGroups).where(eq(skillGroups.id, group.id));
  });
  ctx.reads?.clear(); // a search by this group's name no longer finds anything
}
