import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { AppError, routeHooks } from '../../../http';
import { findOrCreateByProvider, findOrCreateByWallet, getUserById, toCreator, type User } from '../users';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys';
import { clearSessionCookies, credentialCookie, refreshCookieName, setSessionCookies } from './cookies';
import { REGISTRY_ROUTES as r } from 'skill-market/registry';
import { authPlugin } from './plugin';
import { verifyProviderToken } from './provider';
import { refreshSession, revokeSession, startSession } from './sessions';
import { createChallenge, rpcClientFactory, verifyChallenge } from './siwe';

/** `/auth/*`: provider login, wallet sign-in, refresh, logout, API keys. */
export function authRoutes(ctx: ServiceContext) {
  const { auth } = ctx.config;
  const rpc = rpcClientFactory(ctx.config.chain.rpcUrl, ctx.config.chain.rpcTimeoutMs);
  const signedIn = async (user: User, method: 'provider' | 'wallet', cookie: Parameters<typeof setSessionCookies>[0]) => {
    const tokens = await startSession(ctx, user, method);
    setSessionCookies(cookie, auth, tokens);
    return { token: tokens.accessToken, refreshToken: tokens.refreshToken, creator: toCreator(user), expiresIn: auth.accessTtlSeconds };
  };

  return new Elysia({ name: 'auth-routes' })
    .use(authPlugin(ctx))
    .route(
      r.providerLogin.method,
      r.providerLogin.path,
      async ({ headers, cookie }) => {
        const token = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
        if (!token) throw new AppError('UNAUTHORIZED', 'Authentication required');
        const identity = await verifyProviderToken(auth, token, ctx.clock.now());
        const user = await findOrCreateByProvider(ctx, identity.providerUserId, identity.wallet);
        return signedIn(user, 'provider', cookie);
      },
      routeHooks(r.providerLogin),
    )
    .route(r.challenge.method, r.challenge.path, ({ body }) => createChallenge(ctx, body.address), routeHooks(r.challenge))
    .route(
      r.verify.method,
      r.verify.path,
      async ({ body, cookie }) => {
        const address = await verifyChallenge(ctx, body as never, rpc);
        return signedIn(await findOrCreateByWallet(ctx, address), 'wallet', cookie);
      },
      routeHooks(r.verify),
    )
    .route(
      r.refresh.method,
      r.refresh.path,
      async ({ body, cookie }) => {
        const presented = body?.refreshToken ?? credentialCookie(cookie, refreshCookieName(auth));
        if (!presented) throw new AppError('UNAUTHORIZED', 'Authentication required');
        const tokens = await refreshSession(ctx, presented, async (userId) => (await getUserById(ctx, userId))!.walletAddress);
        setSessionCookies(cookie, auth, tokens);
        return { token: tokens.accessToken, refreshToken: tokens.refreshToken, expiresIn: auth.accessTtlSeconds };
      },
      routeHooks(r.refresh),
    )
    .route(
      r.logout.method,
      r.logout.path,
      async ({ principal, cookie }) => {
        if (principal.via === 'session') await revokeSession(ctx, principal.sessionId, 'logout');
        clearSessionCookies(cookie, auth);
        return { success: true as const };
      },
      routeHooks(r.logout),
    )
    .route(
      r.createApiKey.method,
      r.createApiKey.path,
      ({ principal, body, set }) => {
        set.status = 201;
        return createApiKey(ctx, principal.userId, body.name, body.type ?? 'creator');
      },
      routeHooks(r.createApiKey),
    )
    .route(r.apiKeys.method, r.apiKeys.path, ({ principal }) => listApiKeys(ctx, principal.userId), routeHooks(r.apiKeys))
    .route(
      r.revokeApiKey.method,
      r.revokeApiKey.path,
      async ({ principal, params }) => {
        await revokeApiKey(ctx, principal.userId, params.id);
        return { success: true as const };
      },
      routeHooks(r.revokeApiKey),
    );
}
