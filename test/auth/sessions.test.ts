import { describe, expect, it } from 'bun:test';
import { SignJWT } from 'jose';
import { bearer, jsonPost, parseSetCookies, sameOrigin, walletSignIn } from '../support/auth';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';

for (const kind of oneDatabase) {
  describe(`sessions on ${kind}`, () => {
    const fx = registryFixture(kind);

    const me = (token: string) => fx.request('/creators/me', { headers: bearer(token) });
    const refreshWithCookie = (refreshToken: string) =>
      fx.request('/auth/refresh', { method: 'POST', headers: { cookie: `market_refresh=${refreshToken}`, ...sameOrigin } });

    it('rotates the refresh token from the cookie and issues a working access token', async () => {
      const session = await walletSignIn(fx.request);
      fx.clock.advance(5);
      const res = await refreshWithCookie(session.refreshToken);
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.expiresIn).toBe(3600);
      expect(body.refreshToken).not.toBe(session.refreshToken);
      expect(body.token).not.toBe(session.token);
      const cookies = parseSetCookies(res);
      expect(cookies.market_refresh?.value).toBe(body.refreshToken);
      expect(cookies.market_token?.attributes['max-age']).toBe('3600');
      expect((await me(body.token)).status).toBe(200);
    });

    it('accepts {refreshToken} in the body, as older clients send it', async () => {
      const session = await walletSignIn(fx.request);
      const res = await fx.request('/auth/refresh', jsonPost({ refreshToken: session.refreshToken }));
      expect(res.status).toBe(200);
    });

    it('revokes the whole session when an old refresh token is used again', async () => {
      const session = await walletSignIn(fx.request);
      const rotated = (await (await refreshWithCookie(session.refreshToken)).json()) as any;
      const replay = await refreshWithCookie(session.refreshToken);
      expect(replay.status).toBe(401);
      expect(((await replay.json()) as any).error).toBe('Invalid token');
      expect((await refreshWithCookie(rotated.refreshToken)).status).toBe(401);
      expect((await me(rotated.token)).status).toBe(401);
      expect((await me(session.token)).status).toBe(401);
    });

    it('answers 401 for an unknown refresh token and for none', async () => {
      expect((await refreshWithCookie('not-a-token')).status).toBe(401);
      const none = await fx.request('/auth/refresh', { method: 'POST' });
      expect(none.status).toBe(401);
      expect(((await none.json()) as any).error).toBe('Authentication required');
    });

    it('logs out: the session stops working at once and both cookies are cleared', async () => {
      const session = await walletSignIn(fx.request);
      expect((await me(session.token)).status).toBe(200);
      const res = await fx.request('/auth/logout', { method: 'POST', headers: bearer(session.token) });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ success: true });
      const cookies = parseSetCookies(res);
      expect(cookies.market_token?.attributes['max-age']).toBe('0');
      expect(cookies.market_refresh?.attributes['max-age']).toBe('0');
      const after = await me(session.token);
      expect(after.status).toBe(401);
      expect(((await after.json()) as any).error).toBe('Invalid token');
      expect((await refreshWithCookie(session.refreshToken)).status).toBe(401);
    });

    it('accepts the access cookie in place of the Authorization header', async () => {
      const session = await walletSignIn(fx.request);
      const res = await fx.request('/creators/me', { headers: { cookie: `market_token=${session.token}` } });
      expect(res.status).toBe(200);
    });

    it('answers 401 Invalid token for an expired access token', async () => {
      const session = await walletSignIn(fx.request);
      fx.clock.advance(3601);
      try {
        const res = await me(session.token);
        expect(res.status).toBe(401);
        expect(((await res.json()) as any).error).toBe('Invalid token');
      } finally {
        fx.clock.advance(-3601);
      }
    });

    it('refuses an access token signed with another secret or another algorithm', async () => {
      const session = await walletSignIn(fx.request);
      const [, payload] = session.token.split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      const forged = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode('another-secret-of-at-least-32-chars!!'));
      expect((await me(forged)).status).toBe(401);
      const hs512 = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS512' })
        .sign(new TextEncoder().encode('test-secret-that-is-at-least-32-chars!'.repeat(2)));
      expect((await me(hs512)).status).toBe(401);
      const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
      expect((await me(none)).status).toBe(401);
    });
  });
}
