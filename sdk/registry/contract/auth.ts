/** Sign-in (provider token, wallet signature), sessions and API keys. */
import { type Static, Type as T } from '@sinclair/typebox';
import { AddressString, Nullable, Timestamp, Uuid } from './common';
import { Creator } from './users';

const Signature = T.String({ pattern: '^0x[0-9a-fA-F]+$', minLength: 4, maxLength: 8192, description: '0x-prefixed signature' });

export const ChallengeRequest = T.Object({ address: AddressString() });
export const ChallengeResponse = T.Object({ message: T.String(), nonce: T.String(), expiresAt: Timestamp() });
export type ChallengeResponse = Static<typeof ChallengeResponse>;

/** `POST /auth/verify`: the signed EIP-4361 message, or (older clients) the address and signature. */
export const VerifyRequest = T.Union([
  T.Object({ message: T.String({ minLength: 1, maxLength: 4096 }), signature: Signature, address: T.Optional(AddressString()) }),
  T.Object({ address: AddressString(), signature: Signature }),
]);
export type VerifyRequest = Static<typeof VerifyRequest>;

export const SessionResponse = T.Object({
  token: T.String({ description: 'access token (JWT), also set as the access cookie' }),
  refreshToken: T.String({ description: 'refresh token, also set as the HttpOnly refresh cookie' }),
  creator: Creator,
  expiresIn: T.Number({ description: 'access token lifetime in seconds' }),
});
export type SessionResponse = Static<typeof SessionResponse>;

export const RefreshRequest = T.Optional(T.Object({ refreshToken: T.Optional(T.String({ minLength: 1, maxLength: 256 })) }));
export const RefreshResponse = T.Object({ token: T.String(), refreshToken: T.String(), expiresIn: T.Number() });
export type RefreshResponse = Static<typeof RefreshResponse>;

export const API_KEY_TYPES = ['creator', 'consumer'] as const;
export type ApiKeyType = (typeof API_KEY_TYPES)[number];
export const ApiKeyTypeSchema = T.Union([T.Literal('creator'), T.Literal('consumer')]);

export const CreateApiKeyRequest = T.Object({ name: T.String({ minLength: 1, maxLength: 80 }), type: T.Optional(ApiKeyTypeSchema) });
export type CreateApiKeyRequest = Static<typeof CreateApiKeyRequest>;

/** An API key as listed: never the key itself. */
export const ApiKeyView = T.Object({
  id: Uuid(),
  name: T.String(),
  type: ApiKeyTypeSchema,
  keyPrefix: T.String(),
  createdAt: Timestamp(),
  lastUsedAt: Nullable(Timestamp()),
  revokedAt: Nullable(Timestamp()),
});
export type ApiKeyView = Static<typeof ApiKeyView>;
export const ApiKeyList = T.Array(ApiKeyView);

/** `POST /auth/api-keys` (201): the full key, in this answer only. */
export const CreatedApiKey = T.Composite([ApiKeyView, T.Object({ key: T.String({ description: 'the full key, shown only once' }) })]);
export type CreatedApiKey = Static<typeof CreatedApiKey>;
export const IdParam = T.Object({ id: Uuid() });
