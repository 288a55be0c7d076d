/** Authentication as other modules see it: the route plugin, the credential check and secret hashing. */
export { authPlugin } from './plugin';
export { authenticate } from './principal';
export { accessCookieName } from './cookies';
export { hashSecret } from './secrets';
