import { eq } from 'drizzle-orm';
import { skillGroups, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { listGroupSkills } from '../skills';
import { toCreator } from '../users';
import type { GroupDetail } from 'skill-market/registry';
import { toGroupView } from './service';

/**
 * A group with its creator's public profile and its active skills (the shape existing clients
 * read as `SkillGroupWithSkills`); with `creatorAddress`, only if that creator owns it.
 */
export async function getGroupDetail(ctx: ServiceContext, slug: string, creatorAddress?: string): Promise<GroupDetail> {
  const [found] = await ctx.db
    .select({ group: skillGroups, creator: users })
    .from(skillGroups)
    .innerJoin(users, eq(users.id, skillGroups.creatorId))
    .where(eq(skillGroups.slug, slug));
  if (!found || (creatorAddress && found.creator.walletAddress.toLowerCase() !== creatorAddress.toLowerCase())) {
    throw new AppError('NOT_FOUND', 'Group not found');
  }
  return { ...toGroupView(found.group), creator: toCreator(found.creator), skills: await listGroupSkills(ctx, found.group.id) };
}
