/**
 * Which skills the public sees: listed by their creator (`isActive`), not hidden by the operators,
 * and not of a suspended creator. Every public listing (search, a creator's or a group's skills,
 * the discovery catalogues, a skill's page) reads through these; the creator's own view does not.
 */
import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import type { HealthConfig } from '../../../config';
import { serverHealth, skills, users } from '../../../db/schema';
import { AppError } from '../../../http';

/** Not hidden by the operators, directly or by its creator's suspension. */
export const notModerated = and(
  isNull(skills.hiddenAt),
  sql`not exists (select 1 from ${users} where ${users.id} = ${skills.creatorId} and ${users.suspendedAt} is not null)`,
)!;

/** What the public lists: active and {@link notModerated}. */
const publiclyListed = and(eq(skills.isActive, true), notModerated)!;

/** The skill's server has answered a health probe at least once. */
const answeredOnce = sql`exists (select 1 from ${serverHealth} where ${serverHealth.serverUrl} = ${skills.serverUrl} and ${serverHealth.lastUpAt} is not null)`;

/**
 * What this registry lists publicly: {@link publiclyListed}, and with `listAfterFirstCheck` only
 * skills whose server has answered a probe (a new listing waits for its first check).
 */
export const listedWhere = (health: Pick<HealthConfig, 'listAfterFirstCheck'>): SQL =>
  health.listAfterFirstCheck ? and(publiclyListed, answeredOnce)! : publiclyListed;

/** The moderation state a skill row shows: hidden itself, or through its creator's suspension. */
export interface Moderated {
  hiddenAt: Date | null;
  creatorSuspendedAt: Date | null;
}

/** Whether the public may not see the skill. */
export const isHidden = (m: Moderated): boolean => m.hiddenAt !== null || m.creatorSuspendedAt !== null;

/** A hidden skill's page: a clear not-found that says why it is gone, not the operators' reason. */
export const hiddenSkill = () => new AppError('NOT_FOUND', 'This skill is hidden by the marketplace’s operators', { hidden: true });
