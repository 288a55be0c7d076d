/**
 * The operators' decisions: hide a skill or list it again, suspend a creator or lift it. Each
 * changes one flag (nothing is deleted: counts and revenue stay), appends its audit entry, closes
 * the report it answers and tells the creator (a webhook event), all in one transaction.
 */
import { and, asc, eq } from 'drizzle-orm';
import { getAddress } from 'viem';
import type { AuditEntry, ModerationReason } from 'skill-market/registry';
import type { Database } from '../../../db';
import { reports, skills, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { emitEvent } from '../webhook-events';
import { appendEntry } from './audit';
import { type Operator, reasonOf } from './operators';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/** Closes the report a decision answers, as actioned; 404 when there is no such report. */
async function closeReport(tx: Tx, reportId: string | undefined, at: Date): Promise<void> {
  if (!reportId) return;
  const [report] = await tx.select({ status: reports.status }).from(reports).where(eq(reports.id, reportId));
  if (!report) throw new AppError('NOT_FOUND', 'Report not found');
  if (report.status === 'open') await tx.update(reports).set({ status: 'actioned', closedAt: at }).where(eq(reports.id, reportId));
}

/** Hides the skill (`hide`) or lists it again; 409 when it already is so. */
export async function setSkillHidden(
  ctx: ServiceContext,
  operator: Operator,
  slug: string,
  hide: boolean,
  input: ModerationReason,
): Promise<AuditEntry> {
  const reason = reasonOf(input.reason);
  const now = ctx.clock.now();
  const { entry, skillId } = await ctx.db.transaction(async (tx) => {
    const [skill] = await tx.select().from(skills).where(eq(skills.slug, slug)).for('update');
    if (!skill) throw new AppError('NOT_FOUND', 'Skill not found');
    if ((skill.hiddenAt !== null) === hide)
      throw new AppError('CONFLICT', hide ? 'This skill is already hidden' : 'This skill is not hidden');
    await tx
      .update(skills)
      .set(hide ? { hiddenAt: now, hiddenReason: reason } : { hiddenAt: null, hiddenReason: null })
      .where(eq(skills.id, skill.id));
    await closeReport(tx, input.reportId, now);
    const entry = await appendEntry(
      tx,
      operator,
      {
        action: hide ? 'skill.hide' : 'skill.restore',
        targetType: 'skill',
        targetId: skill.id,
        targetLabel: skill.slug,
        reason,
        reportId: input.reportId,
      },
      now,
    );
    await emitEvent(tx, {
      userId: skill.creatorId,
      type: hide ? 'skill.hidden' : 'skill.restored',
      at: now,
      data: { skill: skill.slug, reason },
    });
    return { entry, skillId: skill.id };
  });
  ctx.reads?.skillChanged(skillId);
  return entry;
}

/** Suspends the creator with this address (`suspend`) or lifts it; 409 when it already is so. */
export async function setCreatorSuspended(
  ctx: ServiceContext,
  operator: Operator,
  address: string,
  suspend: boolean,
  input: ModerationReason,
): Promise<AuditEntry> {
  const reason = reasonOf(input.reason);
  const walletAddress = getAddress(address.toLowerCase());
  if (suspend && walletAddress === operator.address)
    throw new AppError('VALIDATION', 'Invalid request: an operator cannot suspend themselves');
  const now = ctx.clock.now();
  const entry = await ctx.db.transaction(async (tx) => {
    const [user] = await tx.select().from(users).where(eq(users.walletAddress, walletAddress)).for('update');
    if (!user) throw new AppError('NOT_FOUND', 'Creator not found');
    if ((user.suspendedAt !== null) === suspend) {
      throw new AppError('CONFLICT', suspend ? 'This creator is already suspended' : 'This creator is not suspended');
    }
    await tx
      .update(users)
      .set(suspend ? { suspendedAt: now, suspendedReason: reason } : { suspendedAt: null, suspendedReason: null })
      .where(eq(users.id, user.id));
    await closeReport(tx, input.reportId, now);
    const entry = await appendEntry(
      tx,
      operator,
      {
        action: suspend ? 'creator.suspend' : 'creator.restore',
        targetType: 'creator',
        targetId: user.id,
        targetLabel: user.walletAddress,
        reason,
        reportId: input.reportId,
      },
      now,
    );
    const owned = await tx
      .select({ slug: skills.slug })
      .from(skills)
      .where(and(eq(skills.creatorId, user.id)))
      .orderBy(asc(skills.slug));
    await emitEvent(tx, {
      userId: user.id,
      type: suspend ? 'creator.suspended' : 'creator.restored',
      at: now,
      data: { reason, skills: owned.map((s) => s.slug) },
    });
    return entry;
  });
  ctx.reads?.clear(); // every listing of theirs, every page that listed one
  return entry;
}
