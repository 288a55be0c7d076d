import { randomBytes } from 'node:crypto';
import { ConfigError, type Env, read, readInteger } from './env';
import type { RunMode } from './modes';

/** Authentication settings: token signing, cookies, identity provider, wallet sign-in. */
export interface AuthConfig {
  /** HS256 secret for access tokens (at least 32 bytes). */
  jwtSecret: Uint8Array;
  /** True when no AUTH_JWT_SECRET was given and a random one was made for this process. */
  jwtSecretGenerated: boolean;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
  /** Cookies are `<prefix>_token` and `<prefix>_refresh`. */
  cookiePrefix: string;
  secureCookies: boolean;
  /** Identity-provider (Privy) login; undefined when not configured. */
  provider: { appId: string; verificationKey: string } | undefined;
  siwe: { domain: string; uri: string; chainId: number; challengeTtlSeconds: number };
}

const AUTH_DEFAULTS = {
  accessTtlSeconds: 3600,
  refreshTtlSeconds: 7 * 24 * 3600,
  cookiePrefix: 'market',
  siweChainId: 8453,
  challengeTtlSeconds: 300,
} as const;

export function readAuthConfig(env: Env, mode: RunMode, publicUrl: URL): AuthConfig {
  const secret = read(env, 'AUTH_JWT_SECRET');
  if (secret === undefined && mode === 'production') {
    throw new ConfigError('AUTH_JWT_SECRET', 'must be set in production (at least 32 random characters)');
  }
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError('AUTH_JWT_SECRET', 'must be at least 32 characters long');
  }
  const cookiePrefix = read(env, 'AUTH_COOKIE_PREFIX') ?? AUTH_DEFAULTS.cookiePrefix;
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cookiePrefix)) {
    throw new ConfigError('AUTH_COOKIE_PREFIX', 'must be 1 to 40 letters, digits, _ or -');
  }
  return {
    jwtSecret: secret === undefined ? new Uint8Array(randomBytes(32)) : new TextEncoder().encode(secret),
    jwtSecretGenerated: secret === undefined,
    accessTtlSeconds: AUTH_DEFAULTS.accessTtlSeconds,
    refreshTtlSeconds: AUTH_DEFAULTS.refreshTtlSeconds,
    cookiePrefix,
    secureCookies: mode !== 'development',
    provider: readProvider(env),
    siwe: {
      domain: publicUrl.host,
      uri: publicUrl.origin,
      chainId: readInteger(env, 'SIWE_CHAIN_ID', AUTH_DEFAULTS.siweChainId, 1, 2 ** 31),
      challengeTtlSeconds: AUTH_DEFAULTS.challengeTtlSeconds,
    },
  };
}

function readProvider(env: Env): AuthConfig['provider'] {
  const appId = read(env, 'PRIVY_APP_ID');
  const key = read(env, 'PRIVY_VERIFICATION_KEY');
  if (appId === undefined && key === undefined) return undefined;
  if (appId === undefined) throw new ConfigError('PRIVY_APP_ID', 'must be set when PRIVY_VERIFICATION_KEY is set');
  if (key === undefined) throw new ConfigError('PRIVY_VERIFICATION_KEY', 'must be set when PRIVY_APP_ID is set');
  // Keys pasted into one-line environments arrive with literal "\n".
  const verificationKey = key.replaceAll('\\n', '\n');
  if (!verificationKey.includes('-----BEGIN PUBLIC KEY-----')) {
    throw new ConfigError('PRIVY_VERIFICATION_KEY', 'must be the app verification key in PEM form (-----BEGIN PUBLIC KEY-----)');
  }
  return { appId, verificationKey };
}
