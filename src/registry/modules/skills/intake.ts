/**
 * Intake that resists spam, inside the registration's transaction: one call URL is one listing (a
 * second skill at a URL already listed, by anyone, is refused naming the first), and a creator
 * lists at most MARKET_NEW_SKILLS_PER_HOUR new skills in any hour (re-registrations do not count).
 */
import { and, desc, eq, gt, ne, sql } from 'drizzle-orm';
import type { Database } from '../../../db';
import { skills, users } from '../../../db/schema';
import { AppError } from '../../../http';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

const HOUR_MS = 3_600_000;
/** Advisory lock space of registrations by endpoint. */
const ENDPOINT_LOCK = 7202613;

/** Holds `endpoint` until the transaction ends: two registrations of one URL cannot both pass {@link refuseTakenEndpoint}. */
export async function lockEndpoint(tx: Tx, endpoint: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${ENDPOINT_LOCK}, hashtext(${endpoint}))`);
}

/** Holds the creator's row until the transaction ends: their new listings are written one at a time. */
export async function lockCreator(tx: Tx, creatorId: string): Promise<void> {
  await tx.select({ id: users.id }).from(users).where(eq(users.id, creatorId)).for('no key update');
}

/** A URL is listed once: 409 when another skill than `ownId` (anyone's, active or not) has it, naming that skill. */
export async function refuseTakenEndpoint(tx: Tx, endpoint: string, ownId: string | undefined): Promise<void> {
  const [taken] = await tx
    .select({ slug: skills.slug })
    .from(skills)
    .where(and(eq(skills.endpoint, endpoint), ownId ? ne(skills.id, ownId) : undefined))
    .limit(1);
  if (!taken) return;
  const why = `${endpoint} is already listed as the skill "${taken.slug}": one endpoint is listed once (re-register that skill by its name to change it)`;
  throw new AppError('CONFLICT', `Endpoint already listed: ${why}`, [{ field: 'endpoint', message: why, skill: taken.slug }]);
}

/**
 * At most `perHour` new listings per creator in any hour (0: no limit); under {@link lockCreator},
 * exact. 429 with Retry-After: the seconds until the oldest of that hour's listings is an hour old.
 */
export async function refuseOverHourlyLimit(tx: Tx, perHour: number, creatorId: string, now: Date): Promise<void> {
  if (perHour === 0) return;
  const recent = await tx
    .select({ createdAt: skills.createdAt })
    .from(skills)
    .where(and(eq(skills.creatorId, creatorId), gt(skills.createdAt, new Date(now.getTime() - HOUR_MS))))
    .orderBy(desc(skills.createdAt))
    .limit(perHour);
  if (recent.length < perHour) return;
  const oldest = recent[recent.length - 1]!.createdAt;
  const retryAfterSeconds = Math.max(1, Math.ceil((oldest.getTime() + HOUR_MS - now.getTime()) / 1000));
  throw new AppError(
    'RATE_LIMITED',
    `Too many new skills: at most ${perHour} new listings per creator per hour (the registry operator's MARKET_NEW_SKILLS_PER_HOUR); try again in ${retryAfterSeconds} s`,
    undefined,
    retryAfterSeconds,
  );
}
