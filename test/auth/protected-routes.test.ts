import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { SignJWT } from 'jose';
import type { DatabaseHandle } from '../../src/db';
import { authTestConfig, bearer, createKey, providerKeys, sameOrigin, walletSignIn } from '../support/auth';
import { oneDatabase, openTestDatabase } from '../support/database';
import { registryWith } from '../support/registry';
import { pendingWork } from '../../src/runtime/pending';

/**
 * Every protected route, with what it needs. Later features add their routes here, so each new
 * route is checked against every credential it must refuse.
 */
const PROTECTED: { method: string; path: string; level: 'account' | 'creator' | 'consumer'; body?: unknown }[] = [
  { method: 'POST', path: '/auth/logout', level: 'account' },
  { method: 'POST', path: '/auth/api-keys', level: 'account', body: { name: 'k' } },
  { method: 'GET', path: '/auth/api-keys', level: 'account' },
  { method: 'DELETE', path: '/auth/api-keys/00000000-0000-4000-8000-000000000000', level: 'account' },
  { method: 'GET', path: '/creators/me', level: 'consumer' },
  { method: 'PATCH', path: '/creators/me', level: 'account', body: { bio: 'x' } },
  { method: 'GET', path: '/creators/me/skills', level: 'creator' },
  { method: 'POST', path: '/wallet/generate', level: 'consumer', body: { address: '0x000000000000000000000000000000000000dEaD' } },
  { method: 'GET', path: '/wallet', level: 'consumer' },
  { method: 'GET', path: '/wallet/all', level: 'consumer' },
  { method: 'GET', path: '/wallet/0x000000000000000000000000000000000000dEaD', level: 'consumer' },
  { method: 'PATCH', path: '/wallet/0x000000000000000000000000000000000000dEaD', level: 'consumer', body: { label: 'x' } },
  { method: 'DELETE', path: '/wallet/0x000000000000000000000000000000000000dEaD', level: 'consumer' },
  { method: 'POST', path: '/groups', level: 'creator', body: { name: 'g' } },
  { method: 'PATCH', path: '/groups/some-group', level: 'creator', body: { name: 'g2' } },
  { method: 'DELETE', path: '/groups/some-group', level: 'creator' },
  {
    method: 'POST',
    path: '/skills',
    level: 'creator',
    body: {
      name: 's',
      endpoint: 'https://x.test',
      price: '$0.01',
      paymentAddress: '0x000000000000000000000000000000000000dEaD',
      groups: ['g'],
    },
  },
  { method: 'PATCH', path: '/skills/some-skill', level: 'creator', body: { price: '$0.02' } },
  { method: 'POST', path: '/analytics/call', level: 'creator', body: { skillId: '00000000-0000-4000-8000-000000000000' } },
  { method: 'POST', path: '/analytics/usage', level: 'consumer', body: { skillId: '00000000-0000-4000-8000-000000000000', amount: 1 } },
  {
    method: 'POST',
    path: '/analytics/favorite',
    level: 'consumer',
    body: { skillId: '00000000-0000-4000-8000-000000000000', action: 'add' },
  },
  { method: 'GET', path: '/analytics/usage', level: 'consumer' },
  { method: 'GET', path: '/analytics/favorites', level: 'consumer' },
  { method: 'GET', path: '/analytics/00000000-0000-4000-8000-000000000000/payments', level: 'consumer' },
];

for (const kind of oneDatabase) {
  describe(`every protected route refuses bad credentials on ${kind}`, () => {
    let database: DatabaseHandle;
    let registry: ReturnType<typeof registryWith>;
    const credentials: Record<string, string> = {};
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      const config = authTestConfig((await providerKeys()).publicKeyPem);
      registry = registryWith(database, config);
      const session = await walletSignIn(registry.request);
      const revoked = await createKey(registry.request, session.token, 'creator');
      await registry.request(`/auth/api-keys/${revoked.id}`, { method: 'DELETE', headers: bearer(session.token) });
      credentials.revoked = revoked.key;
      credentials.consumer = (await createKey(registry.request, session.token, 'consumer')).key;
      credentials.creator = (await createKey(registry.request, session.token, 'creator')).key;
      const [, payload] = session.token.split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      credentials.expired = await new SignJWT({ ...claims, iat: claims.iat - 7200, exp: claims.iat - 3600 })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .sign(config.auth.jwtSecret);
    });
    afterAll(() => database.close());

    const call = (route: (typeof PROTECTED)[number], headers: Record<string, string>) =>
      registry.request(route.path, {
        method: route.method,
        headers: { ...headers, ...(route.body ? { 'content-type': 'application/json' } : {}) },
        ...(route.body ? { body: JSON.stringify(route.body) } : {}),
      });

    for (const route of PROTECTED) {
      const name = `${route.method} ${route.path}`;
      const cases: [string, () => Record<string, string>, number, string][] = [
        ['no credential', () => ({}), 401, 'Authentication required'],
        ['a garbage token', () => bearer('garbage'), 401, 'Invalid token'],
        ['a malformed Authorization header', () => ({ authorization: 'Basic dXNlcjpwYXNz' }), 401, 'Invalid token'],
        ['an unknown API key', () => bearer(`sk_${'A'.repeat(43)}`), 401, 'Invalid token'],
        ['an expired token', () => bearer(credentials.expired!), 401, 'Invalid token'],
        ['a garbage cookie', () => ({ cookie: 'market_token=abc.def.ghi', ...sameOrigin }), 401, 'Invalid token'],
        ['a revoked key', () => bearer(credentials.revoked!), 403, 'API key revoked'],
      ];
      if (route.level === 'creator')
        cases.push(['a consumer key', () => bearer(credentials.consumer!), 403, 'A creator API key (sk_) is required']);
      if (route.level === 'account') cases.push(['a consumer key', () => bearer(credentials.consumer!), 403, '']);
      if (route.level === 'account') cases.push(['a creator key', () => bearer(credentials.creator!), 403, '']);
      for (const [what, headers, status, error] of cases) {
        it(`${name} answers ${status} to ${what}`, async () => {
          const res = await call(route, headers());
          expect(res.status).toBe(status);
          const body = (await res.json()) as any;
          if (error) expect(body.error).toBe(error);
          expect(body.requestId).toBeString();
        });
      }
    }
  });
}

describe('the authentication resolver', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase('embedded');
  });
  afterAll(() => database.close());

  it('refuses a consumer key where creator authentication is required, and accepts a creator key everywhere but account routes', async () => {
    const { authenticate } = await import('../../src/registry/modules/auth/principal');
    const { createLogger } = await import('../../src/log');
    const config = authTestConfig((await providerKeys()).publicKeyPem);
    const registry = registryWith(database, config);
    const session = await walletSignIn(registry.request);
    const consumer = (await createKey(registry.request, session.token, 'consumer')).key;
    const creator = (await createKey(registry.request, session.token, 'creator')).key;
    const ctx = { db: database.db, clock: { now: () => new Date() }, config, logger: createLogger('silent'), pending: pendingWork() };
    await expect(authenticate(ctx, `Bearer ${consumer}`, undefined, 'creator')).rejects.toThrow('A creator API key (sk_) is required');
    expect((await authenticate(ctx, `Bearer ${consumer}`, undefined, 'consumer')).userId).toBe(session.creator.id);
    expect((await authenticate(ctx, `Bearer ${creator}`, undefined, 'creator')).userId).toBe(session.creator.id);
    expect((await authenticate(ctx, `Bearer ${creator}`, undefined, 'consumer')).userId).toBe(session.creator.id);
    await expect(authenticate(ctx, `Bearer ${creator}`, undefined, 'account')).rejects.toThrow('This endpoint needs a signed-in session');
    expect((await authenticate(ctx, undefined, session.token, 'account')).via).toBe('session');
  });
});
