/**
 * HTTP building blocks shared by every party (registry, facilitator, skill server, clients):
 * bounded body reads, the JSON depth and NUL guard, request paths that survive a missing Host, and
 * the client's address behind trusted proxies.
 *
 * @module skill-market/http
 */
export { clientAddress, plainAddress } from './client-address';
export { MAX_JSON_DEPTH, parseGuardedJson, scanJson, type JsonScan } from './json-guard';
export { readLimited, readLimitedBytes } from './read-limited';
export { requestPath, requestPathAndQuery } from './request-path';
