import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { AuthConfig } from '../../../config';
import { ADDRESS_PATTERN } from 'skill-market/x402';
import { AppError } from '../../../http';
import { isUuid } from '../../lib/uuid';

const ISSUER = 'skill-market';
const AUDIENCE = 'skill-market';

/** What an access token says: the user, their wallet, and the session it belongs to. */
export interface AccessClaims {
  userId: string;
  sessionId: string;
  walletAddress: string;
}

/** A short-lived HS256 access token. */
export async function signAccessToken(auth: AuthConfig, claims: AccessClaims, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ sid: claims.sessionId, addr: claims.walletAddress })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + auth.accessTtlSeconds)
    .sign(auth.jwtSecret);
}

/**
 * Verifies an access token: HS256 only (no `none`, no key confusion), our issuer and audience,
 * not expired at `now`. Any failure is 401 `Invalid token`.
 */
export async function verifyAccessToken(auth: AuthConfig, token: string, now: Date): Promise<AccessClaims> {
  try {
    const { payload } = await jwtVerify(token, auth.jwtSecret, {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: now,
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    // Well signed is not well formed: ids go into uuid columns, so anything else is refused here.
    if (!isUuid(payload.sub) || !isUuid(payload.sid) || typeof payload.addr !== 'string' || !ADDRESS_PATTERN.test(payload.addr)) {
      throw new AppError('UNAUTHORIZED', 'Invalid token');
    }
    return { userId: payload.sub, sessionId: payload.sid, walletAddress: payload.addr };
  } catch (error) {
    if (error instanceof AppError || error instanceof joseErrors.JOSEError || error instanceof TypeError) {
      throw new AppError('UNAUTHORIZED', 'Invalid token');
    }
    throw error;
  }
}

/** A JWT has three base64url parts; API keys start with sk_ or ck_. */
export function looksLikeJwt(value: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value);
}
