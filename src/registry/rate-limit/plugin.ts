import { Elysia } from 'elysia';
import type { RateLimitConfig, RateRule } from '../../config';
import type { Clock } from '../context';
import { AppError } from '../../http';
import { clientIp } from '../lib/client-ip';
import { requestPath } from 'skill-market/http';
import type { Hit, RateLimitStore } from './store';

type RouteClass = keyof RateLimitConfig;

/** Sign-in endpoints: counted per IP address with the strict `auth` rule. */
const AUTH_PATHS = new Set(['/auth/challenge', '/auth/verify', '/auth/privy', '/auth/refresh']);
/** Never limited: probes and documentation. */
const OPEN_PATHS = new Set(['/health', '/docs', '/openapi.json']);

function classify(method: string, path: string): RouteClass | undefined {
  if (OPEN_PATHS.has(path)) return undefined;
  if (AUTH_PATHS.has(path)) return 'auth';
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? 'read' : 'write';
}

/**
 * Fixed-window rate limits by route class: sign-in endpoints per IP; other requests per
 * credential when one is presented and verifies (`identify`: a real key, a well-signed token),
 * else per IP — an unverified credential counts as none. Answers 429
 * `Rate limit exceeded` with Retry-After; every limited response carries RateLimit-* headers.
 * A store failure lets the request through (logged): limits protect capacity, not money.
 */
export function rateLimiter(options: {
  rules: RateLimitConfig;
  store: RateLimitStore;
  clock: Clock;
  trustedProxies: readonly string[];
  /** A stable name for the request's credential when it verifies, else undefined. */
  identify: (request: Request) => Promise<string | undefined>;
  onStoreError: (error: unknown) => void;
}) {
  const { rules, store, clock, trustedProxies } = options;
  return new Elysia({ name: 'rate-limit' }).onRequest(async ({ request, server, set }) => {
    const path = requestPath(request.url);
    const routeClass = classify(request.method, path);
    const rule: RateRule = routeClass ? rules[routeClass] : null;
    if (!routeClass || !rule) return;
    const credential = routeClass === 'auth' ? undefined : await options.identify(request);
    const who = credential ? `c:${credential}` : `ip:${clientIp(request, server, trustedProxies)}`;
    const now = clock.now().getTime();
    let hit: Hit;
    try {
      hit = await store.hit(`${routeClass}:${who}`, rule.windowSeconds * 1000, now);
    } catch (error) {
      options.onStoreError(error);
      return;
    }
    const resetSeconds = Math.max(1, Math.ceil((hit.resetAt - now) / 1000));
    set.headers['ratelimit-limit'] = String(rule.limit);
    set.headers['ratelimit-remaining'] = String(Math.max(0, rule.limit - hit.count));
    set.headers['ratelimit-reset'] = String(resetSeconds);
    if (hit.count > rule.limit) {
      set.headers['retry-after'] = String(resetSeconds);
      throw new AppError('RATE_LIMITED', 'Rate limit exceeded');
    }
  });
}
