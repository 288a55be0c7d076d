import { Elysia } from 'elysia';
import type { ServiceContext } from '../../context';
import { accessCookieName, credentialCookie } from './cookies';
import { authenticate, type AccessLevel } from './principal';
import { checkSuspension } from './suspension';

/**
 * `{ auth: 'creator' }` on a route resolves `principal` or answers 401/403 (see principal.ts).
 * Every protected route uses this and nothing else.
 */
export function authPlugin(ctx: ServiceContext) {
  const cookieName = accessCookieName(ctx.config.auth);
  return new Elysia({ name: 'auth' }).macro({
    auth: (level: AccessLevel) => ({
      detail: { security: [{ bearer: [] }, { cookie: [] }] },
      // An arrow function, not a method: Elysia reads the handler's source to learn which context
      // fields it uses, and cannot parse a minified one-line method (the compiled binary's), so
      // `headers` would arrive undefined and every protected route answer 500.
      resolve: async ({ headers, cookie, set, request, path }) => {
        const principal = await authenticate(ctx, headers.authorization, credentialCookie(cookie, cookieName), level);
        checkSuspension(principal.suspension, request.method, path);
        // An answer for one principal: no shared cache may keep it, nor a browser reuse it.
        set.headers['cache-control'] = 'private, no-store';
        return { principal };
      },
    }),
  });
}
