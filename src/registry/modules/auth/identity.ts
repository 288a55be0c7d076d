import type { ServiceContext } from '../../context';
import { hashSecret } from './secrets';
import { findApiKey } from './api-keys';
import { accessCookieName } from './cookies';
import { looksLikeJwt, verifyAccessToken } from './tokens';

/** How many known API-key hashes are remembered (then the memory starts over). */
const KNOWN_KEYS_MAX = 10_000;

/**
 * Who a request's credential proves it is, for counting it (rate limits): `session:<id>` for an
 * access token with a valid signature, `key:<hash>` for an API key that exists, undefined for no
 * credential or one that does not check out. Unverified credentials must count per IP, or anyone
 * could pass a limit by sending `Bearer junk1`, `Bearer junk2`, …
 *
 * Cheap: a token is an HMAC check (no database); a key is one indexed lookup the first time, then
 * remembered (only that it exists — revocation is the authenticator's business, not the counter's).
 */
export function credentialIdentity(ctx: ServiceContext): (request: Request) => Promise<string | undefined> {
  const cookieName = accessCookieName(ctx.config.auth);
  const knownKeys = new Set<string>();
  return async (request) => {
    const credential = presentedCredential(request, cookieName);
    if (!credential) return undefined;
    try {
      if (credential.startsWith('sk_') || credential.startsWith('ck_')) {
        if (credential.length > 128) return undefined;
        const hash = hashSecret(credential);
        if (!knownKeys.has(hash)) {
          if (!(await findApiKey(ctx, credential))) return undefined;
          if (knownKeys.size >= KNOWN_KEYS_MAX) knownKeys.clear();
          knownKeys.add(hash);
        }
        return `key:${hash.slice(0, 32)}`;
      }
      if (!looksLikeJwt(credential)) return undefined;
      return `session:${(await verifyAccessToken(ctx.config.auth, credential, ctx.clock.now())).sessionId}`;
    } catch {
      return undefined; // not verified (or the database is down): counted per IP
    }
  };
}

/** The bearer token, else the access cookie's value. */
function presentedCredential(request: Request, cookieName: string): string | undefined {
  const header = request.headers.get('authorization');
  const bearer = header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  if (bearer) return bearer;
  const cookies = request.headers.get('cookie');
  if (!cookies) return undefined;
  for (const part of cookies.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === cookieName) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
