/**
 * Authentication as other modules see it: the route plugin, the credential check, secret hashing,
 * and API keys (made by the dev stack's seed as by `POST /auth/api-keys`).
 */
export { authPlugin } from './plugin';
export { authenticate } from './principal';
export { accessCookieName, credentialCookie } from './cookies';
export { hashSecret } from './secrets';
export { createApiKey, findApiKey, type ApiKeyType } from './api-keys';
