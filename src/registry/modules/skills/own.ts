import { and, asc, eq } from 'drizzle-orm';
import { getAddress } from 'viem';
import { skillGroupMembers, skills, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import type { SkillView } from 'skill-market/registry';
import { selectSkills, toSkillView } from './view';
import { listedWhere } from './visibility';

/** Every skill of one creator, inactive ones included, by name. */
export async function listOwnSkills(ctx: ServiceContext, creatorId: string): Promise<SkillView[]> {
  const rows = await selectSkills(ctx.db).where(eq(skills.creatorId, creatorId)).orderBy(asc(skills.name));
  return rows.map((r) => toSkillView(r, ctx.config.chain));
}

/** The publicly listed skills of the creator with this wallet address, by name. */
export async function listPublicSkillsOf(ctx: ServiceContext, address: string): Promise<SkillView[]> {
  const rows = await selectSkills(ctx.db)
    .where(and(eq(users.walletAddress, getAddress(address.toLowerCase())), listedWhere(ctx.config.health)))
    .orderBy(asc(skills.name));
  return rows.map((r) => toSkillView(r, ctx.config.chain));
}

/** The publicly listed skills in a group, by name. */
export async function listGroupSkills(ctx: ServiceContext, groupId: string): Promise<SkillView[]> {
  const rows = await selectSkills(ctx.db)
    .innerJoin(skillGroupMembers, eq(skillGroupMembers.skillId, skills.id))
    .where(and(eq(skillGroupMembers.groupId, groupId), listedWhere(ctx.config.health)))
    .orderBy(asc(skills.name));
  return rows.map((r) => toSkillView(r, ctx.config.chain));
}
