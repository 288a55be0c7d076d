import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { RegistryConfig } from '../../src/config';
import type { DatabaseHandle } from '../../src/db';
import { authTestConfig, bearer, createKey, jsonPost, newWallet, providerKeys, walletSignIn } from '../support/auth';
import { databaseKinds, openTestDatabase } from '../support/database';
import { manualClock, registryWith } from '../support/registry';

for (const kind of databaseKinds) {
  describe(`rate limits on ${kind}`, () => {
    let database: DatabaseHandle;
    let pem: string;
    const clock = manualClock(new Date('2026-11-22T10:00:00Z'));
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      pem = (await providerKeys()).publicKeyPem;
    });
    afterAll(() => database.close());

    const limited = (rules: Partial<RegistryConfig['rateLimits']>, extra: Partial<RegistryConfig> = {}) => {
      const config = authTestConfig(pem, extra);
      return registryWith(database, { ...config, rateLimits: { ...config.rateLimits, ...rules }, trustedProxies: ['127.0.0.1'] }, clock);
    };
    const challengeFrom = (registry: ReturnType<typeof registryWith>, ip: string) =>
      registry.request('/auth/challenge', {
        ...jsonPost({ address: newWallet().address }),
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      });

    it('answers 429 Rate limit exceeded after the sign-in burst, with Retry-After and RateLimit headers', async () => {
      const registry = limited({ auth: { limit: 3, windowSeconds: 60 } });
      const ip = `198.51.100.${Math.floor(Math.random() * 200)}`;
      const ok = [];
      for (let i = 0; i < 3; i++) ok.push(await challengeFrom(registry, ip));
      expect(ok.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(ok.map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0']);
      const over = await challengeFrom(registry, ip);
      expect(over.status).toBe(429);
      expect(((await over.json()) as any).error).toBe('Rate limit exceeded');
      expect(over.headers.get('ratelimit-limit')).toBe('3');
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect((await challengeFrom(registry, '203.0.113.9')).status).toBe(200);
    });

    it('lets the client in again in the next window', async () => {
      const registry = limited({ auth: { limit: 1, windowSeconds: 60 } });
      const ip = '192.0.2.77';
      await challengeFrom(registry, ip);
      expect((await challengeFrom(registry, ip)).status).toBe(429);
      clock.advance(60);
      expect((await challengeFrom(registry, ip)).status).toBe(200);
    });

    it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
      const config = authTestConfig(pem);
      const registry = registryWith(
        database,
        { ...config, rateLimits: { ...config.rateLimits, auth: { limit: 2, windowSeconds: 60 } }, trustedProxies: [] },
        clock,
      );
      clock.advance(60);
      const statuses = [];
      for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) statuses.push((await challengeFrom(registry, ip)).status);
      expect(statuses).toEqual([200, 200, 429]);
    });

    it('counts authenticated writes per credential', async () => {
      const open = limited({});
      const { token } = await walletSignIn(open.request);
      const a = await createKey(open.request, token);
      const b = await createKey(open.request, token);
      const registry = limited({ write: { limit: 2, windowSeconds: 60 } });
      clock.advance(60);
      const patch = (key: string) =>
        registry.request('/creators/me', {
          method: 'PATCH',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: '{"bio":"x"}',
        });
      expect([(await patch(a.key)).status, (await patch(a.key)).status, (await patch(a.key)).status]).toEqual([403, 403, 429]);
      expect((await patch(b.key)).status).toBe(403);
    });

    it('sends no rate-limit headers on a class that is off, nor on /health', async () => {
      const registry = limited({ read: null });
      expect((await registry.request('/creators/0x000000000000000000000000000000000000dEaD')).headers.get('ratelimit-limit')).toBeNull();
      expect((await registry.request('/health')).headers.get('ratelimit-limit')).toBeNull();
    });

    if (kind === 'postgres') {
      it('shares the limit between two registry instances on one PostgreSQL', async () => {
        clock.advance(60);
        const first = limited({ auth: { limit: 3, windowSeconds: 60 } });
        const second = limited({ auth: { limit: 3, windowSeconds: 60 } });
        const ip = '198.51.100.250';
        const statuses = [
          (await challengeFrom(first, ip)).status,
          (await challengeFrom(second, ip)).status,
          (await challengeFrom(first, ip)).status,
          (await challengeFrom(second, ip)).status,
          (await challengeFrom(first, ip)).status,
        ];
        expect(statuses).toEqual([200, 200, 200, 429, 429]);
      });

      it('counts exactly under concurrency across instances', async () => {
        clock.advance(60);
        const instances = [limited({ auth: { limit: 10, windowSeconds: 60 } }), limited({ auth: { limit: 10, windowSeconds: 60 } })];
        const results = await Promise.all(Array.from({ length: 30 }, (_, i) => challengeFrom(instances[i % 2]!, '198.51.100.251')));
        expect(results.filter((r) => r.status === 200)).toHaveLength(10);
        expect(results.filter((r) => r.status === 429)).toHaveLength(20);
      });
    }
  });
}
