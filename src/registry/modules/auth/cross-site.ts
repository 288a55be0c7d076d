import type { Server } from 'bun';
import { Elysia } from 'elysia';
import type { RegistryConfig } from '../../../config';
import { AppError } from '../../../http';
import { peerIp } from '../../lib/client-ip';
import { accessCookieName, refreshCookieName } from './cookies';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Writes that start a session and set its cookies. */
const SESSION_STARTS = new Set(['/auth/privy', '/auth/verify', '/auth/refresh']);

/**
 * Cross-site request protection for the browser session. The session cookies are SameSite=Lax,
 * which still lets a page on a sibling subdomain (same site, other origin) post with them, and
 * older browsers ignore SameSite; so a write that would be authenticated by the cookie (a session
 * cookie present, no Authorization header) must come from the registry's own origin: `Origin`,
 * else the origin of `Referer`, equal to PUBLIC_URL's origin or the request's own origin; with
 * neither header, only `Sec-Fetch-Site: same-origin` passes; `Sec-Fetch-Site: cross-site` never
 * does. Requests without the cookie or with a Bearer credential (API clients) are not concerned:
 * a browser never attaches those by itself. A write that starts a session (provider token
 * exchange, wallet sign-in, refresh) sent by a browser (it names an Origin, a Referer or a
 * Sec-Fetch-Site) must come from the registry's own origin even without a cookie or with a Bearer
 * token, so that no other site can plant its own session in a visitor's browser (login CSRF).
 * Runs first, so a refused request writes nothing.
 */
export function crossSiteGuard(config: Pick<RegistryConfig, 'auth' | 'publicUrl' | 'trustedProxies'>) {
  const cookieNames = [accessCookieName(config.auth), refreshCookieName(config.auth)];
  const publicOrigin = config.publicUrl.origin;
  return new Elysia({ name: 'cross-site-guard' }).onRequest(({ request, server }) => {
    if (SAFE_METHODS.has(request.method)) return;
    if (SESSION_STARTS.has(new URL(request.url).pathname) && fromBrowser(request.headers)) {
      if (!isSameOrigin(request, server, publicOrigin, config.trustedProxies))
        throw new AppError('FORBIDDEN', 'Cross-site request refused');
      return;
    }
    if (request.headers.get('authorization')?.trim()) return;
    if (!hasSessionCookie(request.headers.get('cookie'), cookieNames)) return;
    if (!isSameOrigin(request, server, publicOrigin, config.trustedProxies)) throw new AppError('FORBIDDEN', 'Cross-site request refused');
  });
}

function isSameOrigin(request: Request, server: Server<unknown> | null, publicOrigin: string, trustedProxies: readonly string[]): boolean {
  const headers = request.headers;
  if (headers.get('sec-fetch-site')?.trim().toLowerCase() === 'cross-site') return false;
  const claimed = headers.get('origin') ?? refererOrigin(headers.get('referer'));
  if (claimed === undefined) return headers.get('sec-fetch-site')?.trim().toLowerCase() === 'same-origin';
  const origin = originOf(claimed);
  return origin !== undefined && (origin === publicOrigin || origin === ownOrigin(request, server, trustedProxies));
}

/** The origin this request was addressed to: the Host header, and the scheme a trusted proxy reports. */
function ownOrigin(request: Request, server: Server<unknown> | null, trustedProxies: readonly string[]): string | undefined {
  const url = new URL(request.url);
  let scheme = url.protocol.slice(0, -1);
  if (trustedProxies.includes(peerIp(request, server))) {
    const forwarded = request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
    if (forwarded === 'http' || forwarded === 'https') scheme = forwarded;
  }
  return originOf(`${scheme}://${request.headers.get('host') ?? url.host}`);
}

/** The serialized origin of a URL (default ports dropped), or undefined for `null` and garbage. */
function originOf(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
}

/** A Referer names the page; a present but unreadable one counts as a foreign origin (''). */
function refererOrigin(referer: string | null): string | undefined {
  if (referer === null) return undefined;
  return originOf(referer) ?? '';
}

/** A browser names where a write comes from; API clients (CLI, SDK, scripts) usually do not. */
function fromBrowser(headers: Headers): boolean {
  return headers.has('origin') || headers.has('referer') || headers.has('sec-fetch-site');
}

function hasSessionCookie(header: string | null, names: string[]): boolean {
  if (!header) return false;
  return header.split(';').some((pair) => {
    const eq = pair.indexOf('=');
    return eq > 0 && names.includes(pair.slice(0, eq).trim()) && pair.slice(eq + 1).trim() !== '';
  });
}
