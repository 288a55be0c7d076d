import { t } from 'elysia';
import { Creator } from '../users/model';

export const Address = t.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: '0x-prefixed Ethereum address' });
const Signature = t.String({ pattern: '^0x[0-9a-fA-F]+$', minLength: 4, maxLength: 8192, description: '0x-prefixed signature' });

export const ChallengeRequest = t.Object({ address: Address });
export const ChallengeResponse = t.Object({ message: t.String(), nonce: t.String(), expiresAt: t.String({ format: 'date-time' }) });

export const VerifyRequest = t.Union([
  t.Object({ message: t.String({ minLength: 1, maxLength: 4096 }), signature: Signature, address: t.Optional(Address) }),
  t.Object({ address: Address, signature: Signature }),
]);

export const SessionResponse = t.Object({
  token: t.String({ description: 'access token (JWT), also set as the access cookie' }),
  refreshToken: t.String({ description: 'refresh token, also set as the HttpOnly refresh cookie' }),
  creator: Creator,
  expiresIn: t.Number({ description: 'access token lifetime in seconds' }),
});

export const RefreshRequest = t.Optional(t.Object({ refreshToken: t.Optional(t.String({ minLength: 1, maxLength: 256 })) }));
export const RefreshResponse = t.Object({ token: t.String(), refreshToken: t.String(), expiresIn: t.Number() });

export const Success = t.Object({ success: t.Literal(true) });

export const ApiKeyType = t.Union([t.Literal('creator'), t.Literal('consumer')]);
export const CreateApiKeyRequest = t.Object({
  name: t.String({ minLength: 1, maxLength: 80 }),
  type: t.Optional(ApiKeyType),
});
export const ApiKeyView = t.Object({
  id: t.String({ format: 'uuid' }),
  name: t.String(),
  type: ApiKeyType,
  keyPrefix: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  lastUsedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  revokedAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
});
export const CreatedApiKey = t.Composite([ApiKeyView, t.Object({ key: t.String({ description: 'the full key, shown only once' }) })]);
export const IdParam = t.Object({ id: t.String({ format: 'uuid' }) });
