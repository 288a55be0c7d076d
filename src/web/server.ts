import { Elysia } from 'elysia';
import type { RegistryConfig } from '../config';
import page from './app/index.html';
import identityProvider from './app/identity-provider.html';
import { PROVIDER_SDK_PAGE } from './app/lib/identity/load';
import { pageConfig } from './config';

/**
 * Human URLs of the pages, all answered by the one HTML bundle (the app routes in the browser).
 * None collides with an API path; the bundle's hashed chunks are served by Bun at the root.
 */
const PAGE_PATHS = ['/', '/skill/:slug', '/creator/:address', '/signin', '/dashboard', '/dashboard/*'] as const;

/**
 * Bun routes for `new Elysia({ serve: { routes } })`: bundled at build time, no files on disk. The
 * identity provider's SDK is a bundle apart, loaded by the sign-in page (lib/identity/load.ts).
 */
export function pageRoutes(): Record<string, typeof page> {
  return { ...Object.fromEntries(PAGE_PATHS.map((path) => [path, page])), [PROVIDER_SDK_PAGE]: identityProvider };
}

/** `GET /web/config`: what the pages need to know about this registry. */
export function webRoutes(config: RegistryConfig) {
  const body = pageConfig(config);
  return new Elysia({ name: 'web-routes' }).get(
    '/web/config',
    ({ set }) => {
      set.headers['cache-control'] = 'no-cache';
      return body;
    },
    { detail: { tags: ['System'], summary: 'Settings the web pages read at start (network, explorer, login options)' } },
  );
}
