import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { DatabaseConfig } from '../config';
import type { PGlite } from '@electric-sql/pglite';
import { openPGlite, type OpenPGliteOptions } from './embedded';
import { drizzleClient } from './pglite-driver';
import { DATABASE_DEADLINE_MS, type DatabaseStats, withDeadline } from './deadline';
import { migrate } from './migrate';
import { dropTemplate, dumpOf, emptyNewDataDir, extractTemplate, isNewDataDir, readTemplate, saveTemplate } from './template';
import { connectGuarded } from './socket';
import * as schema from './schema';
import type { Database, DatabaseHandle } from './types';

export interface OpenOptions {
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
}

/** Opens the configured database and brings its schema up to date. */
export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<DatabaseHandle> {
  if (config.kind === 'embedded' && config.cacheDir !== undefined && options.migrate !== false && isNewDataDir(config.dataDir)) {
    return openNewEmbedded(config.dataDir, config.cacheDir);
  }
  const handle =
    config.kind === 'postgres'
      ? openPostgres(config.url, config.poolSize, config.readUrl, config.deadlineMs)
      : await openEmbedded(config.dataDir);
  try {
    // Migrations may rightly take long: they run without the per-statement deadline.
    if (options.migrate !== false) await migrate(handle.kind === 'postgres' ? (handle as PostgresHandle).unbounded : handle.db);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * A new embedded database in `dataDir`: written from the migrated template kept in `cacheDir` when
 * there is one (template.ts), else made by initdb and the migrations, after which its dump becomes
 * the template. A template PGlite cannot start from is dropped, and the directory made without it.
 */
async function openNewEmbedded(dataDir: string, cacheDir: string, useTemplate = true): Promise<DatabaseHandle> {
  const template = useTemplate ? await readTemplate(cacheDir) : undefined;
  let wasNew = false;
  let filled = false;
  // Under the directory's lock: another opener may have made the database since it was looked at.
  const prepare = async (dir: string) => {
    wasNew = isNewDataDir(dir);
    if (wasNew && template !== undefined) filled = await extractTemplate(template, dir);
  };
  let handle: EmbeddedHandle | undefined;
  try {
    handle = await openEmbedded(dataDir, { prepare });
    await migrate(handle.db);
  } catch (error) {
    await handle?.close().catch(() => {});
    if (!filled) throw error;
    await dropTemplate(cacheDir);
    await emptyNewDataDir(dataDir);
    return openNewEmbedded(dataDir, cacheDir, false);
  }
  // Nothing but the migrations ran on it yet: its dump is the schema alone.
  if (wasNew && !filled) await saveTemplate(cacheDir, await handle.dump());
  return handle;
}

type PostgresHandle = DatabaseHandle & { unbounded: Database };

/** The application_name of the primary's pool and of the read pool (visible in pg_stat_activity). */
const APPLICATION_NAME = 'market-registry';
export const READ_APPLICATION_NAME = 'market-registry-read';

/** postgres.js with a deadline on connecting and on every statement (deadline.ts). */
function postgresClient(url: string, poolSize: number, applicationName: string) {
  return postgres(url, {
    max: poolSize,
    onnotice: () => {},
    connect_timeout: DATABASE_DEADLINE_MS / 1000,
    // postgres.js waits up to 20 s between reconnects after repeated failures (3^n / 100 s), so
    // a database back from an outage stayed "unavailable" that long; retry within a second.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    connection: { application_name: applicationName },
    // Our own connect (postgres.js's `socket` option, missing from its types): a reset Bun reports
    // after postgres.js let the socket go never ends the process.
    ...({ socket: (options: Parameters<typeof connectGuarded>[0]) => connectGuarded(options, DATABASE_DEADLINE_MS) } as object),
  });
}

/** The primary's pool, and a pool of the same size on `readUrl` (a replica) when given. */
function openPostgres(url: string, poolSize: number, readUrl?: string, deadlineMs = DATABASE_DEADLINE_MS): PostgresHandle {
  const client = postgresClient(url, poolSize, APPLICATION_NAME);
  const reader = readUrl ? postgresClient(readUrl, poolSize, READ_APPLICATION_NAME) : undefined;
  const stats: DatabaseStats = { poolSize: poolSize * (reader ? 2 : 1), inFlight: 0, deadlineHits: 0 };
  const db = drizzlePostgres(withDeadline(client, deadlineMs, stats), { schema }) as unknown as Database;
  return {
    db,
    read: reader ? (drizzlePostgres(withDeadline(reader, deadlineMs, stats), { schema }) as unknown as Database) : db,
    stats,
    unbounded: drizzlePostgres(client, { schema }) as unknown as Database,
    kind: 'postgres',
    // A dedicated connection of postgres.js, outside the pool, that reconnects by itself.
    listen: async (channel, onNotify, onListen) => {
      const request = await client.listen(channel, onNotify, onListen);
      return () => request.unlisten();
    },
    ping: async () => void (await db.execute(sql`select 1`)),
    close: once(() => Promise.all([client.end({ timeout: 1 }), reader?.end({ timeout: 1 })])),
  };
}

/** Opens PGlite in `dataDir`, or in memory when undefined (see {@link OpenPGliteOptions}). */
export async function openEmbedded(dataDir: string | undefined, options: OpenPGliteOptions = {}): Promise<EmbeddedHandle> {
  const { client, release } = await openPGlite(dataDir, options);
  const handle = embeddedHandle(client, async () => {
    try {
      await client.close();
    } finally {
      release();
    }
  });
  return { ...handle, dump: () => dumpOf(client) };
}

/** An embedded database's handle, and the dump of its data directory. */
export type EmbeddedHandle = DatabaseHandle & { dump(): Promise<Blob> };

/** The handle of an open PGlite `client`; `close` runs once, however often the handle is closed. */
export function embeddedHandle(client: PGlite, close: () => Promise<void>): DatabaseHandle {
  const db = drizzlePglite(drizzleClient(client), { schema }) as unknown as Database;
  return {
    db,
    read: db,
    kind: 'embedded',
    // One session in this process: a notification arrives as its transaction commits.
    listen: async (channel, onNotify, onListen) => {
      const stop = await client.listen(channel, onNotify);
      onListen?.();
      return () => stop();
    },
    // PGlite runs in this process, one statement at a time on this thread: it answers, or fails at
    // once when closed (503 then); a deadline could not fire while a statement holds the thread.
    ping: async () => void (await client.query('select 1')),
    close: once(close),
  };
}

function once(fn: () => Promise<unknown>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn().then(() => undefined));
}
