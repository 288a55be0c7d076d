/** What one route of the registry is on the wire: the shape every entry of the route table has. */
import type { Static, TSchema } from '@sinclair/typebox';

/** The HTTP methods the registry's routes use. */
export type RouteMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * Who may call a route, as the registry checks it:
 * - `public`: anyone, no credential.
 * - `consumer`: a session (the access cookie or its token as Bearer), a consumer key (`ck_…`) or a creator key (`sk_…`).
 * - `creator`: a session or a creator key (`sk_…`); a consumer key gets 403.
 * - `account`: a session only; any API key gets 403, so a leaked key cannot mint keys or redirect webhooks.
 * - `consumer-or-payment`: consumer credentials, or none for a body that reports an on-chain payment (verified before it counts).
 * - `provider-token`: an identity provider's access token as Bearer, exchanged for a session.
 * - `refresh-token`: the HttpOnly refresh cookie, or the refresh token in the body.
 *
 * Without a credential a protected route answers 401; with one of the wrong kind, 403.
 */
export type RouteAccess = 'public' | 'consumer' | 'creator' | 'account' | 'consumer-or-payment' | 'provider-token' | 'refresh-token';

/** The access levels a route checks with the registry's credential resolver (a session or an API key). */
export type CredentialAccess = Extract<RouteAccess, 'consumer' | 'creator' | 'account'>;

/** A route's answer: one schema (status 200), or a schema per status (e.g. `{200: X, 201: X}` for an upsert). */
export type RouteResponse = TSchema | { readonly [status: number]: TSchema };

/**
 * One route of the registry: how to call it and what it answers. (The tables write each schema
 * `X as typeof X`: the published declarations then name the schema instead of spelling its type
 * out again for every route that uses it.) The registry declares its routes
 * from these (validation and the OpenAPI document); the SDK's client calls them by these.
 */
export interface Route {
  readonly method: RouteMethod;
  /** The path with its parameters as `:name`, e.g. `/skills/:slug`. */
  readonly path: `/${string}`;
  readonly access: RouteAccess;
  /** Path parameters, by the names in `path`. */
  readonly params?: TSchema;
  readonly query?: TSchema;
  /** The JSON body. */
  readonly body?: TSchema;
  readonly response: RouteResponse;
  /** Sending it twice does what sending it once does: a client may send a write again when no answer came. */
  readonly idempotent?: true;
  /** The OpenAPI tag the route is listed under. */
  readonly tag: string;
  /** One line for the OpenAPI document: what the route does and for whom. */
  readonly summary: string;
}

type Schema<R, K extends 'params' | 'query' | 'body'> = R extends { readonly [key in K]: infer S extends TSchema } ? S : undefined;
type AnswerSchema<R extends Route> = R['response'] extends TSchema
  ? R['response']
  : R['response'] extends { readonly [status: number]: infer S extends TSchema }
    ? S
    : never;

/** The parts of a request to `R`, typed by its schemas: `params` and `body` required where it has them, `query` optional. */
export type RouteInput<R extends Route> = (Schema<R, 'params'> extends TSchema
  ? { params: Static<Schema<R, 'params'>> }
  : { params?: undefined }) &
  (Schema<R, 'query'> extends TSchema ? { query?: Static<Schema<R, 'query'>> } : { query?: undefined }) &
  (Schema<R, 'body'> extends TSchema ? { body: Static<Schema<R, 'body'>> } : { body?: undefined });

/** What `R` answers on success, typed by its response schema (the union of them when it has one per status). */
export type RouteAnswer<R extends Route> = Static<AnswerSchema<R>>;

/**
 * Whether a route checks a session or an API key (see {@link RouteAccess}): a client without
 * either cannot call it.
 *
 * @example
 * needsCredential(REGISTRY_ROUTES.favorite.access); // true: a session or an API key
 * needsCredential(REGISTRY_ROUTES.search.access); // false: public
 */
export const needsCredential = (access: RouteAccess): access is CredentialAccess =>
  access === 'consumer' || access === 'creator' || access === 'account';
