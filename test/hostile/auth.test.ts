import { describe, expect, it } from 'bun:test';
import { SignJWT } from 'jose';
import { authTestConfig, bearer, createKey, providerKeys, sameOrigin, walletSignIn } from '../support/auth';
import { oneDatabase } from '../support/database';
import { registryFixture, registryWith } from '../support/registry';
import { expectRefusal } from './support';

for (const kind of oneDatabase) {
  describe(`hostile credentials on ${kind}`, () => {
    const fx = registryFixture(kind);
    const forge = (claims: Record<string, unknown>) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer('skill-market')
        .setAudience('skill-market')
        .setIssuedAt(Math.floor(fx.clock.now().getTime() / 1000))
        .setExpirationTime(Math.floor(fx.clock.now().getTime() / 1000) + 600)
        .sign(fx.config.auth.jwtSecret);

    it('answers 401 Invalid token for an access cookie whose percent-encoding is broken', async () => {
      for (const cookie of ['market_token=%ZZ', 'market_token=%E0%A4%A', 'market_token={"a":1}', 'market_token=[1]', 'market_token=%00']) {
        const body = await expectRefusal(await fx.request('/auth/api-keys', { headers: { cookie } }), 401, 'UNAUTHORIZED');
        expect(body.error).toBe('Invalid token');
      }
    });

    it('answers 401 Invalid token for a broken refresh cookie', async () => {
      const res = await fx.request('/auth/refresh', { method: 'POST', headers: { ...sameOrigin, cookie: 'market_refresh=%ZZ' } });
      expect((await expectRefusal(res, 401, 'UNAUTHORIZED')).error).toBe('Invalid token');
    });

    it('answers 401 Invalid token for a JWT signed with the right secret whose ids are not UUIDs', async () => {
      const user = await walletSignIn(fx.request);
      const claims = { sub: user.creator.id, addr: user.creator.walletAddress };
      for (const token of [
        await forge({ ...claims, sid: 'not-a-uuid' }),
        await forge({ ...claims, sid: '00000000-0000-0000-0000-00000000000g' }),
        await forge({ ...claims, sid: 5 }),
        await forge({ ...claims, sid: crypto.randomUUID(), sub: 'x' }),
        await forge({ ...claims, sid: crypto.randomUUID(), addr: 'nope' }),
      ]) {
        const body = await expectRefusal(await fx.request('/auth/api-keys', { headers: bearer(token) }), 401, 'UNAUTHORIZED');
        expect(body.error).toBe('Invalid token');
        await expectRefusal(await fx.request('/auth/api-keys', { headers: { cookie: `market_token=${token}` } }), 401, 'UNAUTHORIZED');
      }
    });

    it('counts requests with unverified credentials per IP, not per credential', async () => {
      const config = authTestConfig((await providerKeys()).publicKeyPem);
      const registry = registryWith(
        fx.database,
        {
          ...config,
          rateLimits: { ...config.rateLimits, read: { limit: 20, windowSeconds: 60 }, write: { limit: 20, windowSeconds: 60 } },
          trustedProxies: ['127.0.0.1'],
        },
        fx.clock,
      );
      const from = (ip: string, headers: Record<string, string>) =>
        registry.request('/auth/api-keys', { headers: { ...headers, 'x-forwarded-for': ip } });
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await from('198.51.100.7', bearer(`junk${i}`))).status);
      expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
      expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
      const cookies: number[] = [];
      for (let i = 0; i < 25; i++) cookies.push((await from('198.51.100.8', { cookie: `market_token=junk${i}; other_token=${i}` })).status);
      expect(cookies.filter((s) => s === 429)).toHaveLength(5);
      const keys: number[] = [];
      for (let i = 0; i < 25; i++) keys.push((await from('198.51.100.9', bearer(`sk_${'a'.repeat(40)}${i}`))).status);
      expect(keys.filter((s) => s === 429)).toHaveLength(5);
    });

    it('still counts a verified credential on its own, whatever the IP', async () => {
      const config = authTestConfig((await providerKeys()).publicKeyPem);
      const registry = registryWith(
        fx.database,
        { ...config, rateLimits: { ...config.rateLimits, read: { limit: 3, windowSeconds: 60 } }, trustedProxies: ['127.0.0.1'] },
        fx.clock,
      );
      fx.clock.advance(60);
      const user = await walletSignIn(fx.request);
      const key = (await createKey(fx.request, user.token, 'consumer')).key;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await registry.request('/wallet/all', { headers: { ...bearer(key), 'x-forwarded-for': `203.0.113.${i}` } })).status);
      }
      expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
      expect(statuses[3]).toBe(429);
      // Another IP without a credential still has its own allowance.
      expect((await registry.request('/wallet/all', { headers: { 'x-forwarded-for': '203.0.113.99' } })).status).toBe(401);
    });
  });
}
