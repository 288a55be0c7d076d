/**
 * A route of the registry's route table declared on Elysia: its path parameters, query, body and
 * answer schemas (Elysia validates with them and the OpenAPI document shows them), its access
 * level (the `auth` macro of the registry's auth plugin resolves the principal), its tag and summary.
 */
import type { TSchema } from '@sinclair/typebox';
import { type CredentialAccess, needsCredential, type Route } from 'skill-market/registry';

type Part<R extends Route, K extends 'params' | 'query' | 'body'> = R extends { readonly [key in K]: infer S extends TSchema }
  ? { [key in K]: S }
  : unknown;

/** A route's OpenAPI detail. */
interface Detail {
  tags: string[];
  summary: string;
  security?: Record<string, string[]>[];
}

/** The hooks of a route as Elysia reads them, typed so its handler's context is. */
export type RouteHooks<R extends Route> = Part<R, 'params'> &
  Part<R, 'query'> &
  Part<R, 'body'> & { response: R['response'] } & (R['access'] extends CredentialAccess ? { auth: R['access'] } : unknown) & {
    detail: Detail;
  };

/** What a server may say differently of a route: a body schema refined with its own error message (same shape), a summary. */
export interface RouteRefinement<R extends Route> {
  body?: R['body'];
  summary?: string;
}

/**
 * The hooks that declare `route` on Elysia, for `app.route(route.method, route.path, handler, routeHooks(route))`.
 *
 * @example
 * new Elysia().use(authPlugin(ctx)).route(r.favorites.method, r.favorites.path, ({ principal }) => listFavorites(ctx, principal.userId), routeHooks(r.favorites));
 */
export function routeHooks<const R extends Route>(route: R, refinement: RouteRefinement<R> = {}): RouteHooks<R> {
  const detail: Detail = { tags: [route.tag], summary: refinement.summary ?? route.summary };
  // Documented as optional credentials: the body decides whether they are needed.
  if (route.access === 'consumer-or-payment') detail.security = [{}, { bearer: [] }, { cookie: [] }];
  const hooks: Record<string, unknown> = {};
  if (route.params) hooks.params = route.params;
  if (route.query) hooks.query = route.query;
  if (route.body) hooks.body = refinement.body ?? route.body;
  hooks.response = route.response;
  if (needsCredential(route.access)) hooks.auth = route.access;
  hooks.detail = detail;
  return hooks as RouteHooks<R>;
}
