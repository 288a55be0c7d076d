/**
 * Where the skill server's documents for crawlers and people are served: `/` (its page),
 * `/favicon.svg`, `/.well-known/x402`, `/openapi.json` and `/.well-known/openapi.json`. Each is
 * answered to GET and HEAD, built from the skills as they are sold now; any other method is 405
 * with `Allow`.
 */
import { failure, jsonAnswer, type StoredResponse } from '../http';
import type { SkillRoute } from '../scheme';
import { OPENAPI_PATHS, openApiDocument, type OpenApiSettings, WELL_KNOWN_X402, wellKnownX402 } from './publish';
import { FAVICON_PATH, FAVICON_SVG, indexPage } from './site';

/** What the documents are built from. @internal */
export interface PublishedSite {
  /** The skills as they are sold now. */
  routes(): Iterable<SkillRoute>;
  title: string;
  /** The public base URL, without a trailing slash. */
  serverUrl: string;
  iconUrl?: string | undefined;
  openapi: OpenApiSettings;
}

/** @internal The methods a document's path allows (its 405s' and OPTIONS' `Allow`). */
export const DOCUMENT_METHODS = 'GET, HEAD, OPTIONS';

const DAY_SECONDS = 86_400;

/**
 * The answer to `method` on `path` when `path` is one of the documents; undefined otherwise.
 *
 * @internal
 */
export function publishedAnswer(path: string, method: string, site: PublishedSite): StoredResponse | undefined {
  const document = documentAt(path, site);
  if (!document) return undefined;
  if (method !== 'GET' && method !== 'HEAD') return failure(405, 'Method not allowed', {}, { Allow: DOCUMENT_METHODS });
  return document();
}

const PUBLISHED = new Set(['/', FAVICON_PATH, WELL_KNOWN_X402, ...OPENAPI_PATHS]);

/** @internal Whether `path` is one of the documents. */
export const isPublished = (path: string): boolean => PUBLISHED.has(path);

function documentAt(path: string, site: PublishedSite): (() => StoredResponse) | undefined {
  if (path === WELL_KNOWN_X402) return () => jsonAnswer(200, wellKnownX402(site.routes()));
  if (OPENAPI_PATHS.has(path))
    return () => jsonAnswer(200, openApiDocument(site.routes(), { title: site.title, serverUrl: site.serverUrl, settings: site.openapi }));
  if (path === FAVICON_PATH)
    return () => ({
      status: 200,
      headers: { 'Content-Type': 'image/svg+xml', 'Cache-Control': `public, max-age=${DAY_SECONDS}` },
      body: FAVICON_SVG,
    });
  if (path === '/') {
    return () => ({
      status: 200,
      // A page of text and links: nothing on it runs or loads.
      headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': "default-src 'none'" },
      body: indexPage(site.routes(), site),
    });
  }
  return undefined;
}
