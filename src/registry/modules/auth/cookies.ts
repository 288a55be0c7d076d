import type { Cookie } from 'elysia';
import type { AuthConfig } from '../../../config';
import { AppError } from '../../../http';

export const accessCookieName = (auth: AuthConfig) => `${auth.cookiePrefix}_token`;
export const refreshCookieName = (auth: AuthConfig) => `${auth.cookiePrefix}_refresh`;

type Jar = Record<string, Cookie<unknown>>;

const base = (auth: AuthConfig) => ({ httpOnly: true, secure: auth.secureCookies, sameSite: 'lax' as const, path: '/' });

/** Sets the access cookie (1 hour) and the refresh cookie (7 days), both HttpOnly. */
export function setSessionCookies(jar: Jar, auth: AuthConfig, tokens: { accessToken: string; refreshToken: string }): void {
  jar[accessCookieName(auth)]!.set({ ...base(auth), value: tokens.accessToken, maxAge: auth.accessTtlSeconds });
  jar[refreshCookieName(auth)]!.set({ ...base(auth), value: tokens.refreshToken, maxAge: auth.refreshTtlSeconds });
}

/** Expires both cookies in the browser. */
export function clearSessionCookies(jar: Jar, auth: AuthConfig): void {
  for (const name of [accessCookieName(auth), refreshCookieName(auth)]) {
    jar[name]!.set({ ...base(auth), value: '', maxAge: 0, expires: new Date(0) });
  }
}

/**
 * The text of a credential cookie, undefined when absent. Elysia hands over `null` for a value
 * whose percent-encoding is broken (`%ZZ`) and an object for one that looks like JSON: either is
 * a bad credential, 401 `Invalid token`.
 */
export function credentialCookie(jar: Jar, name: string): string | undefined {
  const value = jar[name]?.value;
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new AppError('UNAUTHORIZED', 'Invalid token');
  return value;
}
