import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { SignJWT, type CryptoKey } from 'jose';
import type { DatabaseHandle } from '../../src/db';
import { authTestConfig, bearer, newWallet, parseSetCookies, providerKeys, providerToken, PROVIDER_APP_ID } from '../support/auth';
import { oneDatabase, openTestDatabase } from '../support/database';
import { registryWith } from '../support/registry';

for (const kind of oneDatabase) {
  describe(`POST /auth/privy on ${kind}`, () => {
    let database: DatabaseHandle;
    let privateKey: CryptoKey;
    let registry: ReturnType<typeof registryWith>;
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      const keys = await providerKeys();
      privateKey = keys.privateKey;
      registry = registryWith(database, authTestConfig(keys.publicKeyPem));
    });
    afterAll(() => database.close());

    const login = (token: string) => registry.request('/auth/privy', { method: 'POST', headers: bearer(token) });

    it('answers {token, creator, expiresIn:3600} and sets both HttpOnly cookies with the right lifetimes', async () => {
      const wallet = newWallet();
      const res = await login(await providerToken(privateKey, { wallet: wallet.address.toLowerCase() }));
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.expiresIn).toBe(3600);
      expect(body.token.split('.')).toHaveLength(3);
      expect(body.creator.walletAddress).toBe(wallet.address);
      const cookies = parseSetCookies(res);
      expect(cookies.market_token?.value).toBe(body.token);
      expect(cookies.market_token?.attributes).toMatchObject({
        'max-age': '3600',
        httponly: true,
        secure: true,
        samesite: 'Lax',
        path: '/',
      });
      expect(cookies.market_refresh?.attributes).toMatchObject({
        'max-age': '604800',
        httponly: true,
        secure: true,
        samesite: 'Lax',
        path: '/',
      });
      expect(cookies.market_refresh?.value).toBe(body.refreshToken);
      const me = await registry.request('/creators/me', { headers: { cookie: `market_token=${body.token}` } });
      expect(((await me.json()) as any).walletAddress).toBe(wallet.address);
    });

    it('gives the same account to the same provider user on every login', async () => {
      const sub = `did:privy:${crypto.randomUUID()}`;
      const wallet = newWallet().address;
      const first = (await (await login(await providerToken(privateKey, { sub, wallet }))).json()) as any;
      const second = (await (await login(await providerToken(privateKey, { sub }))).json()) as any;
      expect(second.creator.id).toBe(first.creator.id);
    });

    it('uses a configurable cookie prefix', async () => {
      const keys = await providerKeys();
      const custom = registryWith(database, {
        ...authTestConfig(keys.publicKeyPem),
        auth: { ...authTestConfig(keys.publicKeyPem).auth, cookiePrefix: 'acme' },
      });
      const res = await custom.request('/auth/privy', {
        method: 'POST',
        headers: bearer(await providerToken(keys.privateKey, { wallet: newWallet().address })),
      });
      expect(Object.keys(parseSetCookies(res)).sort()).toEqual(['acme_refresh', 'acme_token']);
    });

    it('answers 401 Authentication required without a bearer token', async () => {
      const res = await registry.request('/auth/privy', { method: 'POST' });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error).toBe('Authentication required');
    });

    const rejected: [string, () => Promise<string>][] = [
      ['expired', () => providerToken(privateKey, { wallet: newWallet().address, expiresIn: -10 })],
      ['from another issuer', () => providerToken(privateKey, { wallet: newWallet().address, iss: 'evil.io' })],
      ['for another app', () => providerToken(privateKey, { wallet: newWallet().address, aud: 'other-app' })],
      ['signed by another key', async () => providerToken((await providerKeys()).privateKey, { wallet: newWallet().address })],
      [
        'signed with HS256 (algorithm confusion)',
        () =>
          new SignJWT({})
            .setProtectedHeader({ alg: 'HS256' })
            .setSubject('did:privy:x')
            .setIssuer('privy.io')
            .setAudience(PROVIDER_APP_ID)
            .setIssuedAt()
            .setExpirationTime('1h')
            .sign(new TextEncoder().encode('x'.repeat(32))),
      ],
      [
        'unsigned (alg none)',
        async () =>
          `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'did:privy:x', iss: 'privy.io', aud: PROVIDER_APP_ID, exp: 9999999999, iat: 1 })}.`,
      ],
      ['garbage', async () => 'not-a-jwt'],
    ];
    for (const [name, make] of rejected) {
      it(`answers 401 Invalid token for a provider token ${name}`, async () => {
        const res = await login(await make());
        expect(res.status).toBe(401);
        expect(((await res.json()) as any).error).toBe('Invalid token');
        expect(res.headers.getSetCookie()).toEqual([]);
      });
    }

    it('answers 400 when a new provider user has no linked wallet', async () => {
      const res = await login(await providerToken(privateKey, {}));
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error).toBe('The provider account has no linked wallet');
    });
  });
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
