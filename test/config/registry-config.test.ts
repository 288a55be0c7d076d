import { describe, expect, it } from 'bun:test';
import { ConfigError, loadRegistryConfig } from '../../src/config';

describe('registry configuration', () => {
  it('uses the documented defaults when nothing is set', () => {
    const config = loadRegistryConfig({}, '/srv/app');
    expect(config).toEqual({
      mode: 'development',
      host: '0.0.0.0',
      port: 3000,
      database: { kind: 'embedded', dataDir: '/srv/app/.market/data' },
      logLevel: 'info',
      bodyLimitBytes: 1024 * 1024,
    });
  });

  it('chooses PostgreSQL when DATABASE_URL is set', () => {
    const config = loadRegistryConfig({ DATABASE_URL: 'postgres://u@db:5432/market', DATABASE_POOL_SIZE: '4' }, '/');
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://u@db:5432/market', poolSize: 4 });
  });

  it('resolves MARKET_DATA_DIR against the working directory', () => {
    expect(loadRegistryConfig({ MARKET_DATA_DIR: 'var/db' }, '/srv').database).toEqual({ kind: 'embedded', dataDir: '/srv/var/db' });
  });

  const bad: [string, string, RegExp][] = [
    ['PORT', 'abc', /^PORT must be a port number/],
    ['PORT', '70000', /^PORT must be a port number/],
    ['PORT', '-1', /^PORT must be a port number/],
    ['DATABASE_URL', 'mysql://x@y/z', /^DATABASE_URL must start with postgres:\/\//],
    ['DATABASE_URL', 'not a url', /^DATABASE_URL must be a PostgreSQL connection URL/],
    ['DATABASE_POOL_SIZE', '0', /^DATABASE_POOL_SIZE must be a whole number from 1 to 200/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be one of debug, info, warn, error, silent/],
    ['NODE_ENV', 'staging', /^NODE_ENV must be one of development, production, test/],
    ['MARKET_BODY_LIMIT', '1.5', /^MARKET_BODY_LIMIT must be a whole number/],
    ['HOST', 'a b', /^HOST must be a host name or IP address/],
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
      expect((caught as ConfigError).variable).toBe(variable);
      expect((caught as ConfigError).message).toMatch(message);
    });
  }

  it('treats a blank variable as unset', () => {
    expect(loadRegistryConfig({ PORT: '  ', LOG_LEVEL: '' }, '/').port).toBe(3000);
  });
});
