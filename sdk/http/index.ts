/**
 * HTTP building blocks shared by every party (registry, facilitator, skill server, clients):
 * bounded body reads, the JSON depth and NUL guard, and request paths that survive a missing Host.
 *
 * @module skill-market/http
 */
export { MAX_JSON_DEPTH, parseGuardedJson, scanJson, type JsonScan } from './json-guard';
export { readLimited, readLimitedBytes } from './read-limited';
export { requestPath, requestPathAndQuery } from './request-path';
