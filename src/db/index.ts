export { embeddedHandle, openDatabase, openEmbedded } from './open';
export { openPGlite } from './embedded';
export { migrate } from './migrate';
export { DataDirectoryLockedError } from './lock';
export type { Database, DatabaseHandle, DatabaseKind } from './types';
export * as schema from './schema';
export { isDatabaseUnavailable } from './unavailable';
export { prepared, preparedSql, within } from './prepared';
export { createKeyLock } from './key-lock';
