/** Sign-in (provider token, wallet signature), sessions and API keys. */
import { type Static, Type as T } from '@sinclair/typebox';
import { AddressString, Nullable, Timestamp, Uuid } from './common';
import { Creator } from './users';

const Signature = T.String({ pattern: '^0x[0-9a-fA-F]+$', minLength: 4, maxLength: 8192, description: '0x-prefixed signature' });

/**
 * `POST /auth/challenge` body: the 0x address that will sign in. Answered with
 * {@link ChallengeResponse}.
 */
export const ChallengeRequest = T.Object({ address: AddressString() });
/**
 * Answer of `POST /auth/challenge`: a Sign-In with Ethereum (EIP-4361) `message` to sign as it is,
 * with its single-use `nonce`; it expires at `expiresAt` (5 minutes after issue). Send the
 * signature to `POST /auth/verify` ({@link VerifyRequest}).
 */
export const ChallengeResponse = T.Object({ message: T.String(), nonce: T.String(), expiresAt: Timestamp() });
/** The {@link ChallengeResponse} schema's type. */
export type ChallengeResponse = Static<typeof ChallengeResponse>;

/**
 * `POST /auth/verify` body: the signed EIP-4361 message exactly as issued by `POST /auth/challenge`,
 * or (older clients) the address and signature. The challenge is consumed; answered with
 * {@link SessionResponse}, or 401 when the signature, message or nonce does not hold.
 */
export const VerifyRequest = T.Union([
  T.Object({ message: T.String({ minLength: 1, maxLength: 4096 }), signature: Signature, address: T.Optional(AddressString()) }),
  T.Object({ address: AddressString(), signature: Signature }),
]);
/** The {@link VerifyRequest} schema's type. */
export type VerifyRequest = Static<typeof VerifyRequest>;

/**
 * Answer of `POST /auth/privy` and `POST /auth/verify`: a new session. `token` (a JWT, sent as
 * `Authorization: Bearer`) lives `expiresIn` seconds (an hour by default); `refreshToken` lives 7
 * days and is single-use ({@link RefreshRequest}). Both are also set as HttpOnly cookies, so a
 * page on the registry's origin needs neither.
 */
export const SessionResponse = T.Object({
  token: T.String({ description: 'access token (JWT), also set as the access cookie' }),
  refreshToken: T.String({ description: 'refresh token, also set as the HttpOnly refresh cookie' }),
  creator: Creator,
  expiresIn: T.Number({ description: 'access token lifetime in seconds' }),
});
/** The {@link SessionResponse} schema's type. */
export type SessionResponse = Static<typeof SessionResponse>;

/**
 * `POST /auth/refresh` body, optional: older clients send `{refreshToken}`; without it the refresh
 * cookie is used. Answered with {@link RefreshResponse}; a used, expired or revoked refresh token
 * gives 401.
 */
export const RefreshRequest = T.Optional(T.Object({ refreshToken: T.Optional(T.String({ minLength: 1, maxLength: 256 })) }));
/**
 * Answer of `POST /auth/refresh`: a new access `token` (lifetime `expiresIn` seconds) and a new
 * `refreshToken` replacing the one presented, which no longer works. The cookies are set too.
 */
export const RefreshResponse = T.Object({ token: T.String(), refreshToken: T.String(), expiresIn: T.Number() });
/** The {@link RefreshResponse} schema's type. */
export type RefreshResponse = Static<typeof RefreshResponse>;

/**
 * Kinds of API key: `creator` keys start `sk_` (register skills, manage groups, and everything a
 * consumer key may do), `consumer` keys start `ck_` (wallets, usage, favourites, reviews).
 *
 * @example
 * const { key } = await registry.createApiKey({ type: 'consumer', name: 'agent' }); // a type of API_KEY_TYPES; key starts ck_
 */
export const API_KEY_TYPES = ['creator', 'consumer'] as const;
/** One of {@link API_KEY_TYPES}: `creator` (`sk_`) or `consumer` (`ck_`). */
export type ApiKeyType = (typeof API_KEY_TYPES)[number];
/** The schema of an {@link ApiKeyType}: `type` in {@link CreateApiKeyRequest} and {@link ApiKeyView}. */
export const ApiKeyTypeSchema = T.Union([T.Literal('creator'), T.Literal('consumer')]);

/**
 * `POST /auth/api-keys` body (a signed-in session, not an API key): a name for the key (1–80
 * characters) and its `type`, `creator` unless given. Answered 201 with {@link CreatedApiKey}.
 */
export const CreateApiKeyRequest = T.Object({ name: T.String({ minLength: 1, maxLength: 80 }), type: T.Optional(ApiKeyTypeSchema) });
/** The {@link CreateApiKeyRequest} schema's type. */
export type CreateApiKeyRequest = Static<typeof CreateApiKeyRequest>;

/**
 * An API key as `GET /auth/api-keys` lists it: never the key itself, only `keyPrefix` (its type
 * prefix and first 8 characters, to recognise it). `lastUsedAt` is null before first use (and is
 * updated at most once a minute); `revokedAt` is null while the key works.
 */
export const ApiKeyView = T.Object({
  id: Uuid(),
  name: T.String(),
  type: ApiKeyTypeSchema,
  keyPrefix: T.String(),
  createdAt: Timestamp(),
  lastUsedAt: Nullable(Timestamp()),
  revokedAt: Nullable(Timestamp()),
});
/** The {@link ApiKeyView} schema's type. */
export type ApiKeyView = Static<typeof ApiKeyView>;
/**
 * Answer of `GET /auth/api-keys` (a signed-in session): all the caller's keys as {@link ApiKeyView},
 * revoked ones included, newest first.
 */
export const ApiKeyList = T.Array(ApiKeyView);

/**
 * Answer of `POST /auth/api-keys` (201): the new key's {@link ApiKeyView} plus `key`, the full key,
 * in this answer only: the registry keeps only its hash. Send it as `Authorization: Bearer <key>`.
 */
export const CreatedApiKey = T.Composite([ApiKeyView, T.Object({ key: T.String({ description: 'the full key, shown only once' }) })]);
/** The {@link CreatedApiKey} schema's type. */
export type CreatedApiKey = Static<typeof CreatedApiKey>;
/**
 * Path parameters of `DELETE /auth/api-keys/:id`: the key's `id` (a UUID). Revoking is idempotent;
 * an unknown id or someone else's key gives 404.
 */
export const IdParam = T.Object({ id: Uuid() });
