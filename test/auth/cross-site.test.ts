import { beforeAll, describe, expect, it } from 'bun:test';
import {
  authTestConfig,
  bearer,
  createKey,
  jsonPost,
  newWallet,
  providerKeys,
  providerToken,
  sameOrigin,
  TEST_PUBLIC_URL,
  walletSignIn,
} from '../support/auth';
import { json } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { registryFixture, registryWith } from '../support/registry';

const EVIL = 'https://evil.example';
const REFUSED = { error: 'Cross-site request refused', code: 'FORBIDDEN' };

/** Sample values for the path parameters of every route, so each write route can be called. */
const PARAMS: Record<string, string> = {
  id: '00000000-0000-4000-8000-000000000000',
  skillId: '00000000-0000-4000-8000-000000000000',
  slug: 'no-such-thing',
  address: '0x000000000000000000000000000000000000dEaD',
};

for (const kind of oneDatabase) {
  describe(`cross-site protection of cookie-authenticated writes on ${kind}`, () => {
    const fx = registryFixture(kind);
    const cookieOf = (session: { token: string; refreshToken: string }) =>
      `market_token=${session.token}; market_refresh=${session.refreshToken}`;
    const createKeyWith = (headers: Record<string, string>) =>
      fx.request('/auth/api-keys', jsonPost({ name: 'from a page', type: 'consumer' }, headers));
    const keysOf = async (token: string) => json(await fx.request('/auth/api-keys', { headers: bearer(token) }));

    it('refuses a cross-site write carrying a valid session cookie, and writes nothing', async () => {
      const session = await walletSignIn(fx.request);
      const res = await createKeyWith({ cookie: cookieOf(session), origin: EVIL });
      expect(res.status).toBe(403);
      const body = await json(res);
      expect(body).toMatchObject(REFUSED);
      expect(body.requestId).toBe(res.headers.get('x-request-id')!);
      const group = await fx.request('/groups', jsonPost({ name: 'planted' }, { cookie: cookieOf(session), origin: EVIL }));
      expect(group.status).toBe(403);
      expect(await keysOf(session.token)).toEqual([]);
      expect(await json(await fx.request(`/groups?creator=${session.creator.walletAddress}`))).toEqual([]);
    });

    it('lets a write from the registry’s own pages through with the cookie', async () => {
      const session = await walletSignIn(fx.request);
      const cookie = cookieOf(session);
      const allowed: Record<string, string>[] = [
        { origin: TEST_PUBLIC_URL },
        { origin: `${TEST_PUBLIC_URL}:443`, 'sec-fetch-site': 'same-origin' },
        { origin: 'http://localhost' }, // the request's own origin
        { referer: `${TEST_PUBLIC_URL}/dashboard/keys?tab=new` },
        { 'sec-fetch-site': 'same-origin' },
      ];
      for (const headers of allowed) {
        const res = await createKeyWith({ cookie, ...headers });
        expect({ headers, status: res.status }).toEqual({ headers, status: 201 });
      }
      expect(await keysOf(session.token)).toHaveLength(allowed.length);
    });

    it('refuses a write whose origin cannot be shown to be the registry’s own', async () => {
      const session = await walletSignIn(fx.request);
      const cookie = cookieOf(session);
      const refused: Record<string, string>[] = [
        {},
        { origin: 'null' },
        { origin: 'http://registry.test' },
        { origin: 'https://registry.test:8443' },
        { origin: 'https://registry.test.evil.example' },
        { origin: 'not a url' },
        { referer: `${EVIL}/phish` },
        { referer: 'garbage' },
        { origin: EVIL, referer: `${TEST_PUBLIC_URL}/` },
        { origin: TEST_PUBLIC_URL, 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
        { 'sec-fetch-site': 'none' },
      ];
      for (const headers of refused) {
        const res = await createKeyWith({ cookie, ...headers });
        expect({ headers, status: res.status }).toEqual({ headers, status: 403 });
        expect(await json(res)).toMatchObject(REFUSED);
      }
      // Only the refresh cookie is enough to be concerned.
      expect((await createKeyWith({ cookie: `market_refresh=${session.refreshToken}`, origin: EVIL })).status).toBe(403);
      expect(await keysOf(session.token)).toEqual([]);
    });

    it('leaves API clients alone: a Bearer credential or no cookie passes from any origin', async () => {
      const session = await walletSignIn(fx.request);
      const withBearer = await createKeyWith({
        ...bearer(session.token),
        cookie: cookieOf(session),
        origin: EVIL,
        'sec-fetch-site': 'cross-site',
      });
      expect(withBearer.status).toBe(201);
      const { key } = await createKey(fx.request, session.token, 'creator');
      const group = await fx.request('/groups', jsonPost({ name: 'from-a-script' }, { ...bearer(key), origin: EVIL }));
      expect(group.status).toBe(201);
      const view = await fx.request('/analytics/view', jsonPost({ skillId: PARAMS.skillId }, { origin: EVIL }));
      expect(view.status).toBe(404); // public and cookie-less: judged on its merits
    });

    it('refuses a sign-in sent by a browser from another site (login CSRF), with or without a cookie', async () => {
      const keys = await providerKeys();
      const withProvider = registryWith(fx.database, authTestConfig(keys.publicKeyPem));
      const token = await providerToken(keys.privateKey, { wallet: newWallet().address });
      const exchange = (headers: Record<string, string>) =>
        withProvider.request('/auth/privy', { method: 'POST', headers: { ...bearer(token), ...headers } });
      const foreign: Record<string, string>[] = [
        { origin: EVIL },
        { referer: `${EVIL}/login` },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
      ];
      for (const headers of foreign) {
        const res = await exchange(headers);
        expect({ headers, status: res.status }).toEqual({ headers, status: 403 });
        expect(await json(res)).toMatchObject(REFUSED);
        expect(res.headers.getSetCookie()).toEqual([]);
      }
      const wallet = newWallet();
      const { message } = await json(await fx.request('/auth/challenge', jsonPost({ address: wallet.address })));
      const signed = { message, signature: await wallet.signMessage({ message }) };
      const planted = await fx.request('/auth/verify', jsonPost(signed, { origin: EVIL }));
      expect(planted.status).toBe(403);
      expect(planted.headers.getSetCookie()).toEqual([]);
      // From the registry's own pages, and from API clients (no Origin), the same sign-ins work.
      expect((await exchange(sameOrigin)).status).toBe(200);
      expect((await exchange({})).status).toBe(200);
      expect((await fx.request('/auth/verify', jsonPost(signed, sameOrigin))).status).toBe(200);
    });

    it('does not concern reads: a cross-site GET with the cookie is answered', async () => {
      const session = await walletSignIn(fx.request);
      const res = await fx.request('/creators/me', {
        headers: { cookie: cookieOf(session), origin: EVIL, 'sec-fetch-site': 'cross-site' },
      });
      expect(res.status).toBe(200);
    });

    it('refuses a cross-site refresh and logout, which then still work from the registry’s pages', async () => {
      const session = await walletSignIn(fx.request);
      const refreshCookie = { cookie: `market_refresh=${session.refreshToken}` };
      const refresh = await fx.request('/auth/refresh', { method: 'POST', headers: { ...refreshCookie, origin: EVIL } });
      expect(refresh.status).toBe(403);
      expect(refresh.headers.getSetCookie()).toEqual([]);
      const logout = await fx.request('/auth/logout', { method: 'POST', headers: { cookie: cookieOf(session), origin: EVIL } });
      expect(logout.status).toBe(403);
      expect((await fx.request('/creators/me', { headers: bearer(session.token) })).status).toBe(200);

      const rotated = await fx.request('/auth/refresh', { method: 'POST', headers: { ...refreshCookie, ...sameOrigin } });
      expect(rotated.status).toBe(200);
      const fresh = await json(rotated);
      const out = await fx.request('/auth/logout', { method: 'POST', headers: { cookie: `market_token=${fresh.token}`, ...sameOrigin } });
      expect(out.status).toBe(200);
      expect((await fx.request('/creators/me', { headers: bearer(fresh.token) })).status).toBe(401);
    });

    it('takes the request’s own origin from Host, and its scheme from X-Forwarded-Proto only from a trusted proxy', async () => {
      const session = await walletSignIn(fx.request);
      const cookie = cookieOf(session);
      const behindProxy = (registry: ReturnType<typeof registryWith>, origin: string) =>
        registry.request(
          '/auth/api-keys',
          jsonPost({ name: 'proxied' }, { cookie, origin, host: 'market.example:8080', 'x-forwarded-proto': 'https' }),
        );
      // In process the peer is 127.0.0.1: untrusted by default, trusted in the second registry.
      const direct = fx.registry;
      const proxied = registryWith(fx.database, { ...fx.config, trustedProxies: ['127.0.0.1'] }, fx.clock);
      expect((await behindProxy(direct, 'http://market.example:8080')).status).toBe(201);
      expect((await behindProxy(direct, 'https://market.example:8080')).status).toBe(403);
      expect((await behindProxy(proxied, 'https://market.example:8080')).status).toBe(201);
      expect((await behindProxy(proxied, 'http://market.example:8080')).status).toBe(403);
      expect((await behindProxy(proxied, 'https://market.example')).status).toBe(403);
    });

    describe('every write route', () => {
      let cookie: string;
      beforeAll(async () => {
        cookie = cookieOf(await walletSignIn(fx.request));
      });
      // Taken from the app itself, so a route added later is covered without editing this list.
      const writes = () =>
        fx.registry.app.routes
          .filter((r) => !['GET', 'HEAD', 'OPTIONS'].includes(r.method))
          .map((r) => ({ method: r.method, path: r.path.replace(/:(\w+)/g, (_, name: string) => PARAMS[name] ?? 'x') }));
      const send = (route: { method: string; path: string }, headers: Record<string, string>) =>
        fx.request(route.path, { method: route.method, headers: { 'content-type': 'application/json', cookie, ...headers }, body: '{}' });

      it('covers the routes the dashboard writes through', () => {
        const names = writes().map((r) => `${r.method} ${r.path}`);
        for (const name of [
          'POST /auth/refresh',
          'POST /auth/logout',
          'POST /auth/api-keys',
          'PATCH /creators/me',
          'POST /wallet/generate',
          `DELETE /wallet/${PARAMS.address}`,
          'POST /skills',
          'POST /analytics/favorite',
        ]) {
          expect(names).toContain(name);
        }
      });

      it('refuses each one cross-site with the cookie, and judges each one on its merits from the same origin', async () => {
        const outcomes: string[] = [];
        for (const route of writes()) {
          const refused = await send(route, { origin: EVIL });
          const body = await json(refused);
          outcomes.push(`${route.method} ${route.path} ${refused.status} ${body.error}`);
          expect(`${route.method} ${route.path} ${refused.status} ${body.error}`).toBe(
            `${route.method} ${route.path} 403 ${REFUSED.error}`,
          );
          const allowed = await send(route, sameOrigin);
          expect(`${route.method} ${route.path} ${(await json(allowed)).error}`).not.toBe(`${route.method} ${route.path} ${REFUSED.error}`);
        }
        expect(outcomes.length).toBeGreaterThan(15);
      });
    });
  });
}
