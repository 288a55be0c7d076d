export { openDatabase, openEmbedded, type OpenOptions } from './open';
export { migrate } from './migrate';
export { DataDirectoryLockedError, lockDataDirectory, LOCK_FILE } from './lock';
export type { Database, DatabaseHandle, DatabaseKind } from './types';
export * as schema from './schema';
export { DATABASE_DEADLINE_MS, DatabaseUnavailableError } from './deadline';
export { isDatabaseUnavailable } from './unavailable';
export { resultRows } from './rows';
export { prepared, preparedSql, type PreparedSql } from './prepared';
