import { createHash, randomBytes } from 'node:crypto';

/** SHA-256 hex of a high-entropy secret (API key, refresh token): safe to store and index. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** `bytes` random bytes as base64url (no padding). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
