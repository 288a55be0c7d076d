import { and, asc, eq, isNotNull } from 'drizzle-orm';
import type { ModerationStanding } from 'skill-market/registry';
import { skills, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { isOperator } from './operators';

/** The caller's standing: operator or not, their suspension, their hidden skills with the operators' reasons. */
export async function standingOf(ctx: ServiceContext, principal: { userId: string; walletAddress: string }): Promise<ModerationStanding> {
  const [user] = await ctx.db
    .select({ suspendedAt: users.suspendedAt, suspendedReason: users.suspendedReason })
    .from(users)
    .where(eq(users.id, principal.userId));
  const hidden = await ctx.db
    .select({ slug: skills.slug, name: skills.name, hiddenAt: skills.hiddenAt, hiddenReason: skills.hiddenReason })
    .from(skills)
    .where(and(eq(skills.creatorId, principal.userId), isNotNull(skills.hiddenAt)))
    .orderBy(asc(skills.name));
  return {
    operator: isOperator(ctx, principal.walletAddress),
    suspended: user?.suspendedAt ? { reason: user.suspendedReason ?? '', at: user.suspendedAt.toISOString() } : null,
    hiddenSkills: hidden.map((s) => ({ slug: s.slug, name: s.name, reason: s.hiddenReason ?? '', at: s.hiddenAt!.toISOString() })),
  };
}
