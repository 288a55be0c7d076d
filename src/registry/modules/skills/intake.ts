/**
 * Intake that resists spam: a creator lists at most MARKET_LISTINGS_PER_HOUR new skills an hour,
 * and one call URL is one listing (the same endpoint registered as a second skill is refused,
 * naming the first). Both run inside the registration's transaction.
 */
import { and, count, eq, gte, ne, sql } from 'drizzle-orm';
import type { Database } from '../../../db';
import { skills, users } from '../../../db/schema';
import { AppError } from '../../../http';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

const HOUR_MS = 3_600_000;

/** Holds the creator's row until the transaction ends: their new listings are written one at a time. */
export async function lockCreator(tx: Tx, creatorId: string): Promise<void> {
  await tx.select({ id: users.id }).from(users).where(eq(users.id, creatorId)).for('no key update');
}

/** 429 when the creator listed `limit` new skills within the last hour (under {@link lockCreator}, exact). */
export async function checkListingRate(tx: Tx, creatorId: string, now: Date, limit: number): Promise<void> {
  const [recent] = await tx
    .select({ n: count() })
    .from(skills)
    .where(and(eq(skills.creatorId, creatorId), gte(skills.createdAt, new Date(now.getTime() - HOUR_MS))));
  if ((recent?.n ?? 0) >= limit) {
    throw new AppError('RATE_LIMITED', `Too many new listings: at most ${limit} an hour; try again later`);
  }
}

/**
 * 409 when another skill (not `ownId`) is listed at `endpoint`. The check and the write that
 * follows hold a transaction lock on the URL, so two registrations of one URL cannot both pass.
 */
export async function checkEndpointFree(tx: Tx, endpoint: string, ownId?: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`skill-endpoint:${endpoint}`}))`);
  const [taken] = await tx
    .select({ slug: skills.slug })
    .from(skills)
    .where(and(eq(skills.endpoint, endpoint), ownId ? ne(skills.id, ownId) : undefined))
    .limit(1);
  if (taken) {
    throw new AppError('CONFLICT', `This endpoint is already listed as the skill "${taken.slug}": one endpoint, one listing`, {
      field: 'endpoint',
      skill: taken.slug,
    });
  }
}
