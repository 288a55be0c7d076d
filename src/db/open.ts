import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { DatabaseConfig } from '../config';
import { openPGlite } from './embedded';
import { migrate } from './migrate';
import * as schema from './schema';
import type { Database, DatabaseHandle } from './types';

export interface OpenOptions {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
}

/** Opens the configured database and brings its schema up to date. */
export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<DatabaseHandle> {
  const handle = config.kind === 'postgres' ? openPostgres(config.url, config.poolSize) : await openEmbedded(config.dataDir);
  try {
    if (options.migrate !== false) await migrate(handle.db);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function openPostgres(url: string, poolSize: number): DatabaseHandle {
  const client = postgres(url, { max: poolSize, onnotice: () => {}, connect_timeout: 10 });
  const db = drizzlePostgres(client, { schema }) as unknown as Database;
  return {
    db,
    kind: 'postgres',
    ping: async () => void (await db.execute(sql`select 1`)),
    close: once(() => client.end({ timeout: 1 })),
  };
}

/** Opens PGlite in `dataDir`, or in memory when undefined; `loadDataDir` starts from a dump. */
export async function openEmbedded(dataDir: string | undefined, loadDataDir?: Blob): Promise<DatabaseHandle> {
  const { client, release } = await openPGlite(dataDir, loadDataDir);
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  return {
    db,
    kind: 'embedded',
    ping: async () => void (await client.query('select 1')),
    close: once(async () => {
      try {
        await client.close();
      } finally {
        release();
      }
    }),
  };
}

function once(fn: () => Promise<unknown>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn().then(() => undefined));
}
