import { describe, expect, it } from 'bun:test';
import { ConfigError, loadRegistryConfig } from '../../src/config';

describe('registry configuration', () => {
  it('uses the documented defaults when nothing is set', () => {
    const config = loadRegistryConfig({}, '/srv/app');
    expect(config).toMatchObject({
      mode: 'development',
      host: '0.0.0.0',
      port: 3000,
      database: { kind: 'embedded', dataDir: '/srv/app/.market/data' },
      logLevel: 'info',
      bodyLimitBytes: 1024 * 1024,
      webhookTimeoutMs: 5000,
      webhookLeaseMarginMs: 10_000,
      trustedProxies: [],
      rateLimits: {
        auth: { limit: 20, windowSeconds: 60 },
        write: { limit: 300, windowSeconds: 60 },
        read: { limit: 3000, windowSeconds: 60 },
      },
    });
    expect(config.publicUrl.toString()).toBe('http://localhost:3000/');
    expect(config.auth).toMatchObject({
      jwtSecretGenerated: true,
      accessTtlSeconds: 3600,
      refreshTtlSeconds: 604800,
      cookiePrefix: 'market',
      secureCookies: false,
      provider: undefined,
      siwe: { domain: 'localhost:3000', uri: 'http://localhost:3000', chainId: 8453, challengeTtlSeconds: 300 },
    });
    expect(config.auth.jwtSecret.length).toBe(32);
  });

  it('chooses PostgreSQL when DATABASE_URL is set', () => {
    const config = loadRegistryConfig({ DATABASE_URL: 'postgres://u@db:5432/market', DATABASE_POOL_SIZE: '4' }, '/');
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://u@db:5432/market', poolSize: 4 });
  });

  it('reads discovery from DATABASE_READ_URL when set, and keeps public reads 1 s in memory unless READ_CACHE_MS says', () => {
    const config = loadRegistryConfig(
      { DATABASE_URL: 'postgres://u@primary/market', DATABASE_READ_URL: 'postgres://u@replica/market' },
      '/',
    );
    expect(config.database).toEqual({
      kind: 'postgres',
      url: 'postgres://u@primary/market',
      poolSize: 10,
      readUrl: 'postgres://u@replica/market',
    });
    expect(config.readCacheMs).toBe(1000);
    expect(loadRegistryConfig({ READ_CACHE_MS: '0' }, '/').readCacheMs).toBe(0);
  });

  it('resolves MARKET_DATA_DIR against the working directory', () => {
    expect(loadRegistryConfig({ MARKET_DATA_DIR: 'var/db', HOME: '/home/a' }, '/srv').database).toEqual({
      kind: 'embedded',
      dataDir: '/srv/var/db',
      cacheDir: '/home/a/.cache/skill-market',
    });
  });

  const bad: [string, string, RegExp][] = [
    ['PORT', 'abc', /^PORT must be a port number/],
    ['PORT', '70000', /^PORT must be a port number/],
    ['PORT', '-1', /^PORT must be a port number/],
    ['DATABASE_URL', 'mysql://x@y/z', /^DATABASE_URL must start with postgres:\/\//],
    ['DATABASE_URL', 'not a url', /^DATABASE_URL must be a PostgreSQL connection URL/],
    ['DATABASE_POOL_SIZE', '0', /^DATABASE_POOL_SIZE must be a whole number from 1 to 200/],
    ['DATABASE_READ_URL', 'postgres://u@replica/d', /^DATABASE_READ_URL needs DATABASE_URL/],
    ['READ_CACHE_MS', '-1', /^READ_CACHE_MS must be a whole number from 0 to 60000/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be one of debug, info, warn, error, silent/],
    ['NODE_ENV', 'staging', /^NODE_ENV must be one of development, production, test/],
    ['MARKET_BODY_LIMIT', '1.5', /^MARKET_BODY_LIMIT must be a whole number/],
    ['HOST', 'a b', /^HOST must be a host name or IP address/],
    ['PUBLIC_URL', 'ftp://x', /^PUBLIC_URL must be an http\(s\) URL/],
    ['AUTH_JWT_SECRET', 'short', /^AUTH_JWT_SECRET must be at least 32 characters/],
    ['AUTH_COOKIE_PREFIX', 'bad prefix', /^AUTH_COOKIE_PREFIX must be/],
    ['PRIVY_APP_ID', 'app', /^PRIVY_VERIFICATION_KEY must be set when PRIVY_APP_ID is set/],
    ['RATE_LIMIT_AUTH', '10 per minute', /^RATE_LIMIT_AUTH must be "<requests>\/<seconds>"/],
    ['TRUSTED_PROXIES', '10.0.0.1,evil host', /^TRUSTED_PROXIES must list IP addresses/],
    ['SIWE_CHAIN_ID', 'base', /^SIWE_CHAIN_ID must be a whole number/],
    ['MARKET_WEBHOOK_TIMEOUT_MS', '50', /^MARKET_WEBHOOK_TIMEOUT_MS must be a whole number from 100 to 60000/],
    ['MARKET_WEBHOOK_LEASE_MARGIN_MS', 'soon', /^MARKET_WEBHOOK_LEASE_MARGIN_MS must be a whole number/],
  ];
  for (const [variable, value, message] of bad) {
    it(`refuses ${variable}=${value} with an error naming ${variable}`, () => {
      const env: Record<string, string> = { [variable]: value };
      if (variable === 'DATABASE_POOL_SIZE') env.DATABASE_URL = 'postgres://u@h/d';
      let caught: unknown;
      try {
        loadRegistryConfig(env, '/');
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect(message.source).toContain((caught as ConfigError).variable);
      expect((caught as ConfigError).message).toMatch(message);
    });
  }

  it('requires AUTH_JWT_SECRET in production', () => {
    expect(() => loadRegistryConfig({ NODE_ENV: 'production' }, '/')).toThrow('AUTH_JWT_SECRET must be set in production');
  });

  it('sets Secure cookies outside development and reads rate limits and proxies', () => {
    const config = loadRegistryConfig(
      {
        NODE_ENV: 'production',
        AUTH_JWT_SECRET: 'x'.repeat(32),
        RATE_LIMIT_READ: 'off',
        RATE_LIMIT_AUTH: '5/10',
        TRUSTED_PROXIES: '10.0.0.1, ::1',
      },
      '/',
    );
    expect(config.auth.secureCookies).toBe(true);
    expect(config.auth.jwtSecretGenerated).toBe(false);
    expect(config.rateLimits.read).toBeNull();
    expect(config.rateLimits.auth).toEqual({ limit: 5, windowSeconds: 10 });
    expect(config.trustedProxies).toEqual(['10.0.0.1', '::1']);
  });

  it('treats a blank variable as unset', () => {
    expect(loadRegistryConfig({ PORT: '  ', LOG_LEVEL: '' }, '/').port).toBe(3000);
  });
});
