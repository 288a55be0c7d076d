import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { findApiKey, type ApiKeyType } from './api-keys';
import { activeSession } from './sessions';
import type { Suspension } from './suspension';
import { looksLikeJwt, verifyAccessToken } from './tokens';

/** Who is calling, and with what. */
export type Principal = (
  | { via: 'session'; userId: string; walletAddress: string; sessionId: string }
  | { via: 'api-key'; userId: string; walletAddress: string; keyId: string; keyType: ApiKeyType }
) & { suspension: Suspension };

/**
 * What a route needs:
 * - `account`: a signed-in session (cookie or JWT) — managing API keys, the profile, signing out.
 *   API keys cannot mint or revoke keys, so a leaked key cannot entrench itself.
 * - `creator`: a session or a creator key (`sk_`) — groups, registering and updating skills.
 * - `consumer`: a session, a consumer key (`ck_`) or a creator key — wallets, usage, favorites.
 */
export type AccessLevel = 'account' | 'creator' | 'consumer';

/**
 * The one authentication resolver. Reads `Authorization: Bearer <sk_…|ck_…|JWT>`, else the
 * access cookie. Missing → 401 `Authentication required`; malformed, expired, unknown or revoked
 * session → 401 `Invalid token`; revoked key → 403 `API key revoked`; a credential of the wrong
 * kind for the route → 403.
 */
export async function authenticate(
  ctx: ServiceContext,
  authorization: string | undefined,
  cookieToken: string | undefined,
  level: AccessLevel,
): Promise<Principal> {
  const principal = await resolveCredential(ctx, bearer(authorization) ?? cookieToken);
  if (principal.via === 'api-key') {
    if (level === 'account') throw new AppError('FORBIDDEN', 'This endpoint needs a signed-in session, not an API key');
    if (level === 'creator' && principal.keyType !== 'creator') throw new AppError('FORBIDDEN', 'A creator API key (sk_) is required');
  }
  return principal;
}

function bearer(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new AppError('UNAUTHORIZED', 'Invalid token');
  return match[1];
}

async function resolveCredential(ctx: ServiceContext, credential: string | undefined): Promise<Principal> {
  if (credential === undefined || credential === '') throw new AppError('UNAUTHORIZED', 'Authentication required');
  if (credential.startsWith('sk_') || credential.startsWith('ck_')) {
    const key = credential.length <= 128 ? await findApiKey(ctx, credential) : undefined;
    if (!key || !credential.startsWith(key.type === 'creator' ? 'sk_' : 'ck_')) throw new AppError('UNAUTHORIZED', 'Invalid token');
    if (key.revokedAt !== null) throw new AppError('FORBIDDEN', 'API key revoked');
    return {
      via: 'api-key',
      userId: key.userId,
      walletAddress: key.walletAddress,
      keyId: key.id,
      keyType: key.type,
      suspension: key.suspension,
    };
  }
  if (!looksLikeJwt(credential)) throw new AppError('UNAUTHORIZED', 'Invalid token');
  const claims = await verifyAccessToken(ctx.config.auth, credential, ctx.clock.now());
  const session = await activeSession(ctx, claims.sessionId);
  if (!session) throw new AppError('UNAUTHORIZED', 'Invalid token');
  return { via: 'session', ...claims, suspension: session.suspension };
}
