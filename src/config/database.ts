import { resolve } from 'node:path';
import { type Env, readInteger, readPostgresUrl, read } from './env';

/** Where the data lives: a PostgreSQL server, or the embedded database in a directory. */
export type DatabaseConfig = { kind: 'postgres'; url: string; poolSize: number } | { kind: 'embedded'; dataDir: string };

const DEFAULT_DATA_DIR = './.market/data';

/** `DATABASE_URL` set → PostgreSQL; unset → embedded PGlite in `MARKET_DATA_DIR`. */
export function readDatabaseConfig(env: Env, cwd: string): DatabaseConfig {
  const url = readPostgresUrl(env, 'DATABASE_URL');
  if (url !== undefined) {
    return { kind: 'postgres', url, poolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1, 200) };
  }
  return { kind: 'embedded', dataDir: resolve(cwd, read(env, 'MARKET_DATA_DIR') ?? DEFAULT_DATA_DIR) };
}
