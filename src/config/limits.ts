import { ConfigError, type Env, read } from './env';

/** At most `limit` requests per `windowSeconds`; null means no limit. */
export type RateRule = { limit: number; windowSeconds: number } | null;

/** Route classes: sign-in endpoints (strict), authenticated writes, public reads (generous). */
export interface RateLimitConfig {
  auth: RateRule;
  write: RateRule;
  read: RateRule;
}

const RATE_LIMIT_DEFAULTS = { auth: '20/60', write: '300/60', read: '3000/60' } as const;

/** `RATE_LIMIT_AUTH=20/60` means 20 requests per 60 s; `off` disables the class. */
export function readRateLimits(env: Env): RateLimitConfig {
  return {
    auth: readRule(env, 'RATE_LIMIT_AUTH', RATE_LIMIT_DEFAULTS.auth),
    write: readRule(env, 'RATE_LIMIT_WRITE', RATE_LIMIT_DEFAULTS.write),
    read: readRule(env, 'RATE_LIMIT_READ', RATE_LIMIT_DEFAULTS.read),
  };
}

function readRule(env: Env, name: string, fallback: string): RateRule {
  const raw = read(env, name) ?? fallback;
  if (raw.toLowerCase() === 'off') return null;
  const match = /^(\d{1,9})\/(\d{1,7})$/.exec(raw);
  const limit = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]);
  if (!match || limit < 1 || windowSeconds < 1) {
    throw new ConfigError(name, `must be "<requests>/<seconds>" (for example 20/60) or "off", got "${raw}"`);
  }
  return { limit, windowSeconds };
}

/** TRUSTED_PROXIES: comma-separated IP addresses whose X-Forwarded-For is believed. */
export function readTrustedProxies(env: Env): string[] {
  const raw = read(env, 'TRUSTED_PROXIES');
  if (raw === undefined) return [];
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const ip of list) {
    if (!/^[0-9a-fA-F.:]+$/.test(ip)) throw new ConfigError('TRUSTED_PROXIES', `must list IP addresses, got "${ip}"`);
  }
  return list;
}
