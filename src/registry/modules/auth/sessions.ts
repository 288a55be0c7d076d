import { and, eq, isNull, sql } from 'drizzle-orm';
import { prepared } from '../../lib/prepared';
import { refreshTokens, sessions, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import type { User } from '../users';
import { hashSecret, randomToken } from './secrets';
import { signAccessToken } from './tokens';
import { type Suspension, suspensionOf } from './suspension';

/** Tokens handed to a client after sign-in or refresh. */
export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
}

/** Starts a session for `user` and issues its first access and refresh tokens. */
export async function startSession(ctx: ServiceContext, user: User, method: 'provider' | 'wallet'): Promise<IssuedTokens> {
  const now = ctx.clock.now();
  const refreshToken = randomToken();
  const sessionId = await ctx.db.transaction(async (tx) => {
    const [session] = await tx
      .insert(sessions)
      .values({ userId: user.id, method, createdAt: now, expiresAt: addSeconds(now, ctx.config.auth.refreshTtlSeconds) })
      .returning({ id: sessions.id });
    if (!session) throw new Error('session insert returned nothing');
    await tx.insert(refreshTokens).values({
      hash: hashSecret(refreshToken),
      sessionId: session.id,
      createdAt: now,
      expiresAt: addSeconds(now, ctx.config.auth.refreshTtlSeconds),
    });
    return session.id;
  });
  const accessToken = await signAccessToken(ctx.config.auth, { userId: user.id, sessionId, walletAddress: user.walletAddress }, now);
  return { accessToken, refreshToken, sessionId };
}

/**
 * Trades a refresh token for new tokens. The presented token is marked used in the same
 * statement that checks it, so two concurrent refreshes cannot both win; presenting a token that
 * was already used revokes the whole session (someone else has it).
 */
export async function refreshSession(
  ctx: ServiceContext,
  presented: string,
  walletOf: (userId: string) => Promise<string>,
): Promise<IssuedTokens> {
  const now = ctx.clock.now();
  const hash = hashSecret(presented);
  const outcome = await ctx.db.transaction(async (tx) => {
    const [claimed] = await tx
      .update(refreshTokens)
      .set({ usedAt: now })
      .where(and(eq(refreshTokens.hash, hash), isNull(refreshTokens.usedAt)))
      .returning();
    if (!claimed) {
      const [seen] = await tx.select().from(refreshTokens).where(eq(refreshTokens.hash, hash));
      return seen ? ({ type: 'reused', sessionId: seen.sessionId } as const) : ({ type: 'unknown' } as const);
    }
    const [session] = await tx.select().from(sessions).where(eq(sessions.id, claimed.sessionId));
    if (!session || session.revokedAt !== null || claimed.expiresAt <= now || session.expiresAt <= now) {
      return { type: 'unknown' } as const;
    }
    const next = randomToken();
    const expiresAt = addSeconds(now, ctx.config.auth.refreshTtlSeconds);
    await tx.insert(refreshTokens).values({ hash: hashSecret(next), sessionId: session.id, createdAt: now, expiresAt });
    await tx.update(sessions).set({ expiresAt }).where(eq(sessions.id, session.id));
    return { type: 'rotated', session, refreshToken: next } as const;
  });
  switch (outcome.type) {
    case 'reused':
      await revokeSession(ctx, outcome.sessionId, 'refresh token reused');
      ctx.logger.warn('refresh token reused; session revoked', { sessionId: outcome.sessionId });
      throw new AppError('UNAUTHORIZED', 'Invalid token');
    case 'unknown':
      throw new AppError('UNAUTHORIZED', 'Invalid token');
    case 'rotated': {
      const { session, refreshToken } = outcome;
      const walletAddress = await walletOf(session.userId);
      const accessToken = await signAccessToken(ctx.config.auth, { userId: session.userId, sessionId: session.id, walletAddress }, now);
      return { accessToken, refreshToken, sessionId: session.id };
    }
  }
}

export async function revokeSession(ctx: ServiceContext, sessionId: string, reason: string): Promise<void> {
  await ctx.db
    .update(sessions)
    .set({ revokedAt: ctx.clock.now(), revokedReason: reason })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)));
}

/** True while the session exists, is not revoked and has not expired. */
/** The session's account's suspension when the session is active (null: not suspended); undefined when it is not active. */
export async function activeSession(ctx: ServiceContext, sessionId: string): Promise<{ suspension: Suspension } | undefined> {
  const [session] = await prepared(ctx.db, 'session_state', (db) =>
    db
      .select({
        revokedAt: sessions.revokedAt,
        expiresAt: sessions.expiresAt,
        suspendedAt: users.suspendedAt,
        suspendedReason: users.suspendedReason,
      })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(eq(sessions.id, sql.placeholder('id')))
      .prepare('session_state'),
  ).execute({ id: sessionId });
  if (session === undefined || session.revokedAt !== null || session.expiresAt <= ctx.clock.now()) return undefined;
  return { suspension: suspensionOf(session) };
}

function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}
