import { describe, expect, it } from 'bun:test';
import { ConfigError, HEALTH_DEFAULTS, loadRegistryConfig, readHealthConfig } from '../../src/config';

describe('skill health configuration', () => {
  it('probes in development and production, with the documented defaults, and never in tests unless asked', () => {
    expect(loadRegistryConfig({}, '/').health).toEqual({ ...HEALTH_DEFAULTS, enabled: true, allowPrivateAddresses: true });
    expect(readHealthConfig({}, 'production')).toEqual({
      ...HEALTH_DEFAULTS,
      enabled: true,
      allowPrivateAddresses: false,
      listAfterFirstCheck: true,
    });
    expect(readHealthConfig({}, 'test')).toMatchObject({ enabled: false, allowPrivateAddresses: false });
    expect(readHealthConfig({ MARKET_HEALTH_PROBES: 'on' }, 'test').enabled).toBe(true);
  });

  it('refuses private addresses in production unless MARKET_HEALTH_ALLOW_PRIVATE says otherwise', () => {
    expect(readHealthConfig({ MARKET_HEALTH_ALLOW_PRIVATE: 'true' }, 'production').allowPrivateAddresses).toBe(true);
    expect(readHealthConfig({ MARKET_HEALTH_ALLOW_PRIVATE: 'false' }, 'development').allowPrivateAddresses).toBe(false);
  });

  it('reads every setting', () => {
    const env = {
      MARKET_HEALTH_INTERVAL: '60',
      MARKET_HEALTH_MAX_BACKOFF: '600',
      MARKET_HEALTH_TIMEOUT_MS: '2000',
      MARKET_HEALTH_CONCURRENCY: '8',
      MARKET_HEALTH_HIDE_AFTER: '3600',
    };
    expect(readHealthConfig(env, 'production')).toEqual({
      enabled: true,
      intervalSeconds: 60,
      maxBackoffSeconds: 600,
      timeoutMs: 2000,
      concurrency: 8,
      hideAfterSeconds: 3600,
      allowPrivateAddresses: false,
      listAfterFirstCheck: true,
    });
  });

  it('lists a new skill only after its first check in production, at once in development and tests, as MARKET_LIST_AFTER_FIRST_CHECK says', () => {
    expect(readHealthConfig({}, 'development').listAfterFirstCheck).toBe(false);
    expect(readHealthConfig({}, 'test').listAfterFirstCheck).toBe(false);
    expect(readHealthConfig({ MARKET_LIST_AFTER_FIRST_CHECK: 'false' }, 'production').listAfterFirstCheck).toBe(false);
    expect(readHealthConfig({ MARKET_LIST_AFTER_FIRST_CHECK: 'true' }, 'development').listAfterFirstCheck).toBe(true);
    expect(readHealthConfig({ MARKET_HEALTH_PROBES: 'off' }, 'production').listAfterFirstCheck).toBe(false);
  });

  for (const [variable, value] of [
    ['MARKET_HEALTH_PROBES', 'sometimes'],
    ['MARKET_HEALTH_INTERVAL', '5'],
    ['MARKET_HEALTH_CONCURRENCY', '0'],
    ['MARKET_HEALTH_HIDE_AFTER', '1h'],
    ['MARKET_HEALTH_ALLOW_PRIVATE', 'maybe'],
  ] as const) {
    it(`refuses ${variable}=${value} naming the variable`, () => {
      expect(() => loadRegistryConfig({ [variable]: value }, '/')).toThrow(ConfigError);
      expect(() => loadRegistryConfig({ [variable]: value }, '/')).toThrow(new RegExp(`^${variable} must`));
    });
  }
});
