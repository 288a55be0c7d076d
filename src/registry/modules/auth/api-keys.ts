import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { prepared } from '../../lib/prepared';
import { apiKeys, users } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { emitEvent } from '../webhook-events';
import { hashSecret, randomToken } from './secrets';
import { type Suspension, suspensionOf } from './suspension';

export type ApiKeyType = 'creator' | 'consumer';
export type ApiKeyRow = typeof apiKeys.$inferSelect;

const KEY_PREFIX: Record<ApiKeyType, string> = { creator: 'sk_', consumer: 'ck_' };
/** Characters of the key shown in listings: the type prefix and 8 of the random part. */
const VISIBLE = 11;
/** lastUsedAt is written at most this often per key. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface ApiKeyView {
  id: string;
  name: string;
  type: ApiKeyType;
  keyPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

function toApiKeyView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    keyPrefix: row.keyPrefix,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

/** Makes a key (32 random bytes after `sk_` or `ck_`), stores its hash, returns it once. */
export async function createApiKey(
  ctx: ServiceContext,
  userId: string,
  name: string,
  type: ApiKeyType,
): Promise<ApiKeyView & { key: string }> {
  const key = KEY_PREFIX[type] + randomToken(32);
  const [row] = await ctx.db
    .insert(apiKeys)
    .values({ userId, name, type, keyPrefix: key.slice(0, VISIBLE), keyHash: hashSecret(key), createdAt: ctx.clock.now() })
    .returning();
  if (!row) throw new Error('api key insert returned nothing');
  return { ...toApiKeyView(row), key };
}

export async function listApiKeys(ctx: ServiceContext, userId: string): Promise<ApiKeyView[]> {
  const rows = await ctx.db.select().from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(desc(apiKeys.createdAt));
  return rows.map(toApiKeyView);
}

/** Revokes one of the caller's keys; someone else's key or an unknown id is 404. Idempotent. */
export async function revokeApiKey(ctx: ServiceContext, userId: string, id: string): Promise<void> {
  const [row] = await ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId)));
  if (!row) throw new AppError('NOT_FOUND', 'API key not found');
  if (row.revokedAt === null) {
    const now = ctx.clock.now();
    await ctx.db.transaction(async (tx) => {
      const revoked = await tx
        .update(apiKeys)
        .set({ revokedAt: now })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .returning({ id: apiKeys.id });
      // The account hears of it: a key revoked by someone with its session, or by its owner.
      if (revoked.length > 0) {
        await emitEvent(tx, {
          userId,
          type: 'key.revoked',
          at: now,
          data: { keyId: row.id, name: row.name, type: row.type, prefix: row.keyPrefix },
        });
      }
    });
  }
}

/**
 * The key row for a presented key, or undefined. Also records use, at most once a minute per
 * key, off the request path.
 */
export async function findApiKey(
  ctx: ServiceContext,
  presented: string,
): Promise<(ApiKeyRow & { walletAddress: string; suspension: Suspension }) | undefined> {
  const [found] = await prepared(ctx.db, 'api_key_by_hash', (db) =>
    db
      .select({ key: apiKeys, walletAddress: users.walletAddress, suspendedAt: users.suspendedAt, suspendedReason: users.suspendedReason })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .where(eq(apiKeys.keyHash, sql.placeholder('hash')))
      .prepare('api_key_by_hash'),
  ).execute({ hash: hashSecret(presented) });
  if (!found) return undefined;
  const row = { ...found.key, walletAddress: found.walletAddress, suspension: suspensionOf(found) };
  if (row.revokedAt !== null) return row;
  const now = ctx.clock.now();
  if (row.lastUsedAt === null || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    void ctx.pending.track(
      ctx.db
        .update(apiKeys)
        .set({ lastUsedAt: now })
        .where(eq(apiKeys.id, row.id))
        .catch((error: unknown) => ctx.logger.warn('could not record API key use', { keyId: row.id, error })),
    );
  }
  return row;
}
