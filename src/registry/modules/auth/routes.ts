import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { findOrCreateByProvider, findOrCreateByWallet, getUserById, toCreator, type User } from '../users';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys';
import { clearSessionCookies, credentialCookie, refreshCookieName, setSessionCookies } from './cookies';
import * as m from 'skill-market/registry';
import { authPlugin } from './plugin';
import { verifyProviderToken } from './provider';
import { refreshSession, revokeSession, startSession } from './sessions';
import { createChallenge, rpcClientFactory, verifyChallenge } from './siwe';

const tags = ['Authentication'];

/** `/auth/*`: provider login, wallet sign-in, refresh, logout, API keys. */
export function authRoutes(ctx: ServiceContext) {
  const { auth } = ctx.config;
  const rpc = rpcClientFactory(ctx.config.chain.rpcUrl, ctx.config.chain.rpcTimeoutMs);
  const signedIn = async (user: User, method: 'provider' | 'wallet', cookie: Parameters<typeof setSessionCookies>[0]) => {
    const tokens = await startSession(ctx, user, method);
    setSessionCookies(cookie, auth, tokens);
    return { token: tokens.accessToken, refreshToken: tokens.refreshToken, creator: toCreator(user), expiresIn: auth.accessTtlSeconds };
  };

  return new Elysia({ name: 'auth-routes', prefix: '/auth' })
    .use(authPlugin(ctx))
    .post(
      '/privy',
      async ({ headers, cookie }) => {
        const token = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
        if (!token) throw new AppError('UNAUTHORIZED', 'Authentication required');
        const identity = await verifyProviderToken(auth, token, ctx.clock.now());
        const user = await findOrCreateByProvider(ctx, identity.providerUserId, identity.wallet);
        return signedIn(user, 'provider', cookie);
      },
      { response: m.SessionResponse, detail: { tags, summary: 'Exchange an identity-provider access token (Bearer) for a session' } },
    )
    .post('/challenge', ({ body }) => createChallenge(ctx, body.address), {
      body: m.ChallengeRequest,
      response: m.ChallengeResponse,
      detail: { tags, summary: 'Get a Sign-In with Ethereum message to sign' },
    })
    .post(
      '/verify',
      async ({ body, cookie }) => {
        const address = await verifyChallenge(ctx, body as never, rpc);
        return signedIn(await findOrCreateByWallet(ctx, address), 'wallet', cookie);
      },
      { body: m.VerifyRequest, response: m.SessionResponse, detail: { tags, summary: 'Sign in with a signed challenge' } },
    )
    .post(
      '/refresh',
      async ({ body, cookie }) => {
        const presented = body?.refreshToken ?? credentialCookie(cookie, refreshCookieName(auth));
        if (!presented) throw new AppError('UNAUTHORIZED', 'Authentication required');
        const tokens = await refreshSession(ctx, presented, async (userId) => (await getUserById(ctx, userId))!.walletAddress);
        setSessionCookies(cookie, auth, tokens);
        return { token: tokens.accessToken, refreshToken: tokens.refreshToken, expiresIn: auth.accessTtlSeconds };
      },
      {
        body: m.RefreshRequest,
        response: m.RefreshResponse,
        detail: { tags, summary: 'Rotate the refresh token and get a new access token' },
      },
    )
    .post(
      '/logout',
      async ({ principal, cookie }) => {
        if (principal.via === 'session') await revokeSession(ctx, principal.sessionId, 'logout');
        clearSessionCookies(cookie, auth);
        return { success: true as const };
      },
      { auth: 'account', response: m.Success, detail: { tags, summary: 'Revoke the current session and clear the cookies' } },
    )
    .post(
      '/api-keys',
      ({ principal, body, set }) => {
        set.status = 201;
        return createApiKey(ctx, principal.userId, body.name, body.type ?? 'creator');
      },
      {
        auth: 'account',
        body: m.CreateApiKeyRequest,
        response: { 201: m.CreatedApiKey },
        detail: { tags, summary: 'Create an API key (the full key is in this response only)' },
      },
    )
    .get('/api-keys', ({ principal }) => listApiKeys(ctx, principal.userId), {
      auth: 'account',
      response: m.ApiKeyList,
      detail: { tags, summary: 'List your API keys (never the keys themselves)' },
    })
    .delete(
      '/api-keys/:id',
      async ({ principal, params }) => {
        await revokeApiKey(ctx, principal.userId, params.id);
        return { success: true as const };
      },
      { auth: 'account', params: m.IdParam, response: m.Success, detail: { tags, summary: 'Revoke an API key' } },
    );
}
