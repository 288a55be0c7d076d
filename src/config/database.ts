import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, type Env, readInteger, readPostgresUrl, read } from './env';

/** Where the data lives: a PostgreSQL server, or the embedded database in a directory. */
export type DatabaseConfig =
  | {
      kind: 'postgres';
      url: string;
      poolSize: number;
      /** A read replica for discovery reads (DATABASE_READ_URL); unset: everything reads the primary. */
      readUrl?: string;
      /** How long one statement may take before the database counts as unavailable; default DATABASE_DEADLINE_MS (src/db/deadline.ts). */
      deadlineMs?: number;
    }
  | {
      kind: 'embedded';
      dataDir: string;
      /** Where a migrated empty database is kept for new data directories (src/db/template.ts); unset: none. */
      cacheDir?: string;
    };

const DEFAULT_DATA_DIR = './.market/data';

/** `DATABASE_URL` set → PostgreSQL; unset → embedded PGlite in `MARKET_DATA_DIR`. */
export function readDatabaseConfig(env: Env, cwd: string): DatabaseConfig {
  const url = readPostgresUrl(env, 'DATABASE_URL');
  if (url !== undefined) {
    const readUrl = readPostgresUrl(env, 'DATABASE_READ_URL');
    return { kind: 'postgres', url, poolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1, 200), ...(readUrl ? { readUrl } : {}) };
  }
  if (read(env, 'DATABASE_READ_URL') !== undefined) {
    throw new ConfigError('DATABASE_READ_URL', 'needs DATABASE_URL: a read replica is of a PostgreSQL primary');
  }
  return { kind: 'embedded', dataDir: resolve(cwd, read(env, 'MARKET_DATA_DIR') ?? DEFAULT_DATA_DIR), cacheDir: readCacheDir(env) };
}

/** `$XDG_CACHE_HOME/skill-market`, else `~/.cache/skill-market`: what can be made again, kept to save time. */
export function readCacheDir(env: Env): string {
  const xdg = read(env, 'XDG_CACHE_HOME');
  const base = xdg?.startsWith('/') ? xdg : join(read(env, 'HOME') ?? homedir(), '.cache');
  return join(base, 'skill-market');
}
