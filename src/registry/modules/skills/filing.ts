/**
 * Filing a skill under its creator's groups: the names a registration or update gives, resolved to
 * the creator's own groups. Here rather than in the groups module, which lists a group's skills
 * through this one (groups → skills, never back).
 */
import { eq } from 'drizzle-orm';
import { skillGroups } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';

type GroupRow = typeof skillGroups.$inferSelect;

/**
 * The caller's groups named in `names` (matched by name, case-insensitive, or by slug), in order
 * and without repeats. A name that is not one of the caller's groups → 400 naming it.
 */
export async function resolveOwnedGroups(ctx: ServiceContext, creatorId: string, names: string[]): Promise<GroupRow[]> {
  const wanted = [...new Set(names.map((n) => n.trim()).filter(Boolean))];
  if (wanted.length === 0) throw new AppError('VALIDATION', 'Invalid request: field "groups": at least one group is required');
  const own = await ctx.db.select().from(skillGroups).where(eq(skillGroups.creatorId, creatorId));
  const found: GroupRow[] = [];
  for (const name of wanted) {
    const group = own.find((g) => g.name.toLowerCase() === name.toLowerCase() || g.slug === name);
    if (!group)
      throw new AppError('VALIDATION', `Group not found: "${name}" is not one of your groups (create it first with POST /groups)`);
    if (!found.includes(group)) found.push(group);
  }
  return found;
}
