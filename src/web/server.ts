import type { HTMLBundle } from 'bun';
import { Elysia } from 'elysia';
import type { RegistryConfig } from '../config';
import { AppError } from '../http';
import page from './app/index.html';
import identityProvider from './app/identity-provider.html';
import { PROVIDER_SDK_PAGE } from './app/lib/identity/load';
import { pageFiles, type BundledFile } from './bundle';
import { pageConfig } from './config';

/**
 * Human URLs of the pages, all answered by the one HTML bundle (the app routes in the browser).
 * None collides with an API path; the bundle's hashed chunks are served at the root.
 */
const PAGE_PATHS = ['/', '/skill/:slug', '/creator/:address', '/signin', '/dashboard', '/dashboard/*'] as const;

/**
 * What the pages may load. Only this registry's own scripts run. 'unsafe-eval': the x402 codec
 * compiles its TypeBox validators with new Function. Skill servers are anywhere, hence
 * connect-src (which also lets /signin reach the identity provider's API when the registry offers
 * provider login). No other origin may frame them (clickjacking of the signed-in dashboard).
 */
const PAGE_CONTENT_POLICY =
  "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; " +
  "connect-src 'self' https: http:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The identity provider's bundle is a page only to carry its scripts: it runs none of its own. */
const SDK_PAGE_CONTENT_POLICY = "default-src 'none'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The chunks' names carry their content hash: a browser may keep them. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
const hidden = { detail: { hide: true } } as const;

/**
 * The pages and their scripts and stylesheets, answered with the registry's headers (the content
 * policy, no framing) and only to GET and HEAD: the identity provider's SDK is a bundle apart, loaded
 * by the sign-in page (lib/identity/load.ts). Bundled at build time into the binary, or on first use
 * when run from source; no files on disk.
 */
export function pageRoutes() {
  const app = new Elysia({ name: 'page-routes' });
  for (const path of PAGE_PATHS) app.get(path, ({ request, set }) => htmlOf(page, PAGE_CONTENT_POLICY, request, set.headers), hidden);
  app.get(PROVIDER_SDK_PAGE, ({ request, set }) => htmlOf(identityProvider, SDK_PAGE_CONTENT_POLICY, request, set.headers), hidden);
  app.get(
    '/:asset',
    async ({ request, params }) => {
      for (const bundle of [page, identityProvider]) {
        const file = (await pageFiles(bundle)).assets.get(`/${params.asset}`);
        if (file) return answer(file, ASSET_CACHE, request);
      }
      throw new AppError('NOT_FOUND', 'Not found');
    },
    hidden,
  );
  return app;
}

async function htmlOf(bundle: HTMLBundle, policy: string, request: Request, headers: Record<string, unknown>): Promise<Response> {
  headers['content-security-policy'] = policy;
  return answer((await pageFiles(bundle)).html, 'no-cache', request);
}

function answer(file: BundledFile, cacheControl: string, request: Request): Response {
  const headers = { 'content-type': file.type, etag: file.etag, 'cache-control': cacheControl };
  if (request.headers.get('if-none-match') === file.etag) return new Response(null, { status: 304, headers });
  return new Response(file.body, { headers });
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
