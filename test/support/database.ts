import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import type { PGlite } from '@electric-sql/pglite';
import { embeddedHandle, migrate, openDatabase, openEmbedded, openPGlite, type DatabaseHandle, type DatabaseKind } from '../../src/db';
import { extractTemplate, migrationsHash, readTemplate, saveTemplate } from '../../src/db/template';
import { TEST_CACHE_DIR } from './cache';

/**
 * Which databases a test file runs on; each file gets a fresh, migrated database of each kind.
 *
 * The embedded database is PostgreSQL itself (PGlite), so a statement both run answers the same on
 * both. What differs is around the statements: PGlite runs one statement at a time in this process,
 * while a PostgreSQL server runs a pool of connections (and other processes) at once. So a file
 * repeats on PostgreSQL ({@link databaseKinds}, when TEST_DATABASE_URL is set, as in CI) when what
 * it checks depends on that:
 * - concurrent writers and locks: counters, unique conflicts or single-use rows under concurrent
 *   requests, `for update` (`skip locked`), advisory locks, the key lock (src/db/key-lock.ts);
 * - code that takes another path per kind: the rate-limit store, LISTEN/NOTIFY (the read cache),
 *   statement deadlines, pools, several instances (or pools) on one database;
 * - migrations, and the stores that hold money or deliveries under those locks (the facilitator's
 *   payment and channel stores, payment verification, webhook delivery, the creators' shared channels);
 * - the registry's search and aggregate queries (trigram search, per-day sums, text order), whose
 *   answer may depend on the server's version and settings (collation, time zone).
 * Every other file (validation, auth flows, pages, the SDK and CLI against a registry, plain reads
 * and writes) runs once, on the embedded database ({@link oneDatabase}).
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() || undefined;
/** The embedded database, and PostgreSQL as well when TEST_DATABASE_URL is set: for a file whose checks differ between the two. */
export const databaseKinds: DatabaseKind[] = TEST_DATABASE_URL ? ['embedded', 'postgres'] : ['embedded'];
/** The embedded database alone: for a file whose checks cannot differ between the two (see above). */
export const oneDatabase: DatabaseKind[] = ['embedded'];

let embeddedTemplate: Promise<Blob> | undefined;

/**
 * A dump of a migrated embedded database: the kept template, or one made in memory (initdb and the
 * migrations take seconds) and kept for the next process. Once in memory per process.
 */
export function migratedDump(): Promise<Blob> {
  embeddedTemplate ??= (async () => {
    const kept = await readTemplate(TEST_CACHE_DIR);
    if (kept !== undefined) return kept;
    const first = await openEmbedded(undefined);
    try {
      await migrate(first.db);
      const dump = await first.dump();
      await saveTemplate(TEST_CACHE_DIR, dump);
      return dump;
    } finally {
      await first.close();
    }
  })();
  return embeddedTemplate;
}

/**
 * Embedded databases closed by their tests, emptied and kept for the next one in this process:
 * starting PGlite from the dump takes 0.3–0.8 s, emptying one a few tens of ms.
 */
const idleEmbedded: PGlite[] = [];
const MAX_IDLE_EMBEDDED = 2;

/**
 * Empties a used embedded database to what the migrations left: every public table's rows (with
 * triggers off, so that foreign keys and append-only tables do not object), its sequences from 1,
 * and the session's settings, prepared statements, locks and temporary tables. The migrations add
 * no rows, so empty tables are the migrated state.
 */
async function emptyEmbedded(client: PGlite): Promise<void> {
  await client.exec(EMPTY_PUBLIC_SCHEMA);
  await client.exec('discard all');
}

/** Deletes every public table's rows (triggers off) and restarts its sequences: both databases. */
const EMPTY_PUBLIC_SCHEMA = `set session_replication_role = replica;
do $$
declare name text;
begin
  for name in select quote_ident(tablename) from pg_tables where schemaname = 'public' loop
    execute 'delete from ' || name;
  end loop;
  for name in select quote_ident(sequencename) from pg_sequences where schemaname = 'public' loop
    execute 'alter sequence ' || name || ' restart';
  end loop;
end $$;
set session_replication_role = origin;`;

/**
 * A migrated in-memory PGlite: one a closed test left (emptied), or one loaded from the dump. The
 * test's handle reaches it through a view that fails as a closed PGlite does once the handle is
 * closed, so work a test left running cannot touch the next test's rows; its listeners stop then too.
 */
async function freshEmbedded(): Promise<DatabaseHandle> {
  const client = idleEmbedded.pop() ?? (await openPGlite(undefined, { loadDataDir: await migratedDump() })).client;
  let open = true;
  const view = new Proxy(client, {
    get(target, key) {
      if (!open) throw new Error('PGlite is closed');
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const listening = new Set<() => Promise<void>>();
  const handle = embeddedHandle(view, async () => {
    open = false;
    for (const stop of listening) await stop().catch(() => {});
    try {
      if (idleEmbedded.length >= MAX_IDLE_EMBEDDED) throw new Error('enough kept');
      await emptyEmbedded(client);
      idleEmbedded.push(client);
    } catch {
      await client.close().catch(() => {});
    }
  });
  return {
    ...handle,
    listen: async (channel, onNotify, onListen) => {
      const stop = await handle.listen(channel, onNotify, onListen);
      listening.add(stop);
      return async () => {
        listening.delete(stop);
        await stop();
      };
    },
  };
}

/** Fills the folder `dataDir` with a migrated embedded database, so a server process started on it skips initdb. */
export async function seedEmbeddedDataDir(dataDir: string): Promise<void> {
  const dump = await migratedDump();
  const seeded = await openEmbedded(dataDir, { prepare: async (dir) => void (await extractTemplate(dump, dir)) });
  await seeded.close();
}

const adminClient = () => postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
const randomName = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
function urlOf(name: string): string {
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates database `name` (from `template` when given), waiting out a template's last session ending. */
async function createDatabase(name: string, template?: string): Promise<void> {
  const admin = adminClient();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.unsafe(`create database ${name}${template ? ` template ${template}` : ''}`);
        return;
      } catch (error) {
        // 55006: "source database is being accessed by other users" — a session that just closed
        // on the template may still be ending on the server.
        if ((error as { code?: string }).code !== '55006' || attempt >= 100) throw error;
        await Bun.sleep(50);
      }
    }
  } finally {
    await admin.end();
  }
}

function dropper(name: string) {
  return async () => {
    const admin = adminClient();
    await admin.unsafe(`drop database if exists ${name} with (force)`).finally(() => admin.end());
  };
}

/** An empty database on the TEST_DATABASE_URL server (e.g. for a server process): its URL, and `drop()`. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = randomName('market_test');
  await createDatabase(name);
  return { url: urlOf(name), drop: dropper(name) };
}

let postgresTemplate: Promise<string> | undefined;

/**
 * A database on the TEST_DATABASE_URL server holding every migration, named by their hash, made
 * once per server and schema (the first process to finish building it names it; the others use
 * theirs and drop their own copy). Nobody connects to it after: each test database is a copy.
 */
function migratedTemplate(): Promise<string> {
  postgresTemplate ??= (async () => {
    const name = `market_template_${migrationsHash()}`;
    const admin = adminClient();
    try {
      if ((await admin`select 1 from pg_database where datname = ${name}`).length > 0) return name;
      const building = randomName('market_template_building');
      await createDatabase(building);
      await (await openDatabase({ kind: 'postgres', url: urlOf(building), poolSize: 1 })).close();
      for (let attempt = 0; ; attempt++) {
        try {
          await admin.unsafe(`alter database ${building} rename to ${name}`);
          return name;
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (code === '42P04') {
            // another process named its template first
            await admin.unsafe(`drop database if exists ${building} with (force)`);
            return name;
          }
          if (code !== '55006' || attempt >= 100) throw error;
          await Bun.sleep(50);
        }
      }
    } finally {
      await admin.end();
    }
  })();
  return postgresTemplate;
}

/** A migrated database on the TEST_DATABASE_URL server, copied from the template: its URL, and `drop()`. */
export async function createMigratedPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = randomName('market_test');
  await createDatabase(name, await migratedTemplate());
  return { url: urlOf(name), drop: dropper(name) };
}

/**
 * A fresh database for a server process (`market registry`, `market facilitator`) of `kind`: the
 * environment that points it there (a new PostgreSQL database, or a migrated embedded one in the
 * folder `dataDir`), and `drop()` for the PostgreSQL one (the caller removes its folders).
 */
export async function processDatabase(
  kind: DatabaseKind,
  dataDir: string,
): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (kind === 'postgres') {
    const created = await createMigratedPostgresDatabase();
    return { env: { DATABASE_URL: created.url, DATABASE_POOL_SIZE: '5' }, drop: created.drop };
  }
  await seedEmbeddedDataDir(dataDir);
  return { env: { MARKET_DATA_DIR: dataDir }, drop: async () => {} };
}

/**
 * The statement deadline of test databases. The registry's own (1.5 s, src/db/deadline.ts) makes a
 * statement that waits longer a 503, which test/hostile/database-down.test.ts checks on its own
 * databases; on a loaded test machine a hundred transactions queued on one row wait longer than
 * that without anything being wrong, so tests of everything else give the database 15 s.
 */
const TEST_STATEMENT_DEADLINE_MS = 15_000;

/**
 * PostgreSQL test databases closed by their tests, emptied and kept for the next test of this
 * process: a copy of the template costs the server about 0.3 s, emptying one a few tens of ms.
 * A kept one is renamed (`market_idle_<pid>_…`) once every connection to it is ended, so work a
 * test left running (a second pool, a server process) cannot reach the next test's rows, and is
 * kept only while its schema is still the template's. Kept ones a finished process left behind
 * are dropped by the next process that starts a PostgreSQL test.
 */
const idlePostgres: string[] = [];
const MAX_IDLE_POSTGRES = 2;
let templateShape: Promise<string> | undefined;
let leftoversDropped: Promise<void> | undefined;

/** A digest of the public schema: relations and their columns, constraints, triggers and functions. */
async function shapeOf(client: postgres.Sql): Promise<string> {
  const [row] = await client<{ shape: string }[]>`select md5(concat_ws('|',
    (select string_agg(relname::text || ':' || relkind::text || ':' || relnatts::text, ',' order by relname) from pg_class where relnamespace = 'public'::regnamespace),
    (select string_agg(conname::text, ',' order by conname) from pg_constraint where connamespace = 'public'::regnamespace),
    (select string_agg(t.tgname::text, ',' order by t.tgname) from pg_trigger t join pg_class c on c.oid = t.tgrelid where c.relnamespace = 'public'::regnamespace),
    (select string_agg(proname::text, ',' order by proname) from pg_proc where pronamespace = 'public'::regnamespace))) as shape`;
  return row!.shape;
}

/** Renames database `from` to `to` once no session is on it; false when `from` is gone. */
async function renameDatabase(admin: postgres.Sql, from: string, to: string): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${from} and pid <> pg_backend_pid()`;
    try {
      await admin.unsafe(`alter database ${from} rename to ${to}`);
      return true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === '3D000') return false; // does not exist
      if (code !== '55006' || attempt >= 100) throw error; // 55006: a session is still ending
      await Bun.sleep(20);
    }
  }
}

/** Kept databases of processes that are gone (this machine's process ids). */
async function dropLeftovers(): Promise<void> {
  const admin = adminClient();
  try {
    const kept = await admin<{ datname: string }[]>`select datname from pg_database where datname like 'market\_idle\_%'`;
    for (const { datname } of kept) {
      const pid = Number(datname.split('_')[2]);
      let alive = pid === process.pid;
      try {
        if (!alive) process.kill(pid, 0);
        alive = true;
      } catch {}
      if (!alive) await admin.unsafe(`drop database if exists ${datname} with (force)`).catch(() => {});
    }
  } finally {
    await admin.end();
  }
}

/** A kept database renamed for a test, or a new copy of the template; its name. */
async function takePostgres(): Promise<string> {
  leftoversDropped ??= dropLeftovers().catch(() => {});
  await leftoversDropped;
  for (let kept = idlePostgres.pop(); kept !== undefined; kept = idlePostgres.pop()) {
    const name = randomName('market_test');
    const admin = adminClient();
    try {
      if (await renameDatabase(admin, kept, name)) return name;
    } catch {
      // taken by something else: make a new one
    } finally {
      await admin.end();
    }
  }
  const { url } = await createMigratedPostgresDatabase();
  const name = new URL(url).pathname.slice(1);
  if (templateShape === undefined) {
    // Read from the first copy before any test has it.
    const client = postgres(url, { max: 1, onnotice: () => {} });
    templateShape = shapeOf(client)
      .catch(() => 'unknown: nothing is kept')
      .finally(() => client.end());
    await templateShape;
  }
  return name;
}

/** Empties and keeps `name` for the next test, or drops it (enough kept, schema changed, any failure). */
async function givePostgresBack(name: string): Promise<void> {
  const idle = `market_idle_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  let keep = idlePostgres.length < MAX_IDLE_POSTGRES;
  const admin = adminClient();
  try {
    if (keep) keep = await renameDatabase(admin, name, idle);
    if (keep) {
      const client = postgres(urlOf(idle), { max: 1, onnotice: () => {} });
      try {
        keep = (await shapeOf(client)) === (await templateShape);
        if (keep) await client.unsafe(EMPTY_PUBLIC_SCHEMA);
      } finally {
        await client.end();
      }
    }
  } catch {
    keep = false;
  }
  try {
    if (keep) idlePostgres.push(idle);
    else {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.unsafe(`drop database if exists ${idle} with (force)`);
    }
  } finally {
    await admin.end();
  }
}

/** A migrated, empty database on the TEST_DATABASE_URL server, kept for the next test or dropped on close. */
async function freshPostgres(): Promise<DatabaseHandle> {
  const name = await takePostgres();
  const handle = await openDatabase({ kind: 'postgres', url: urlOf(name), poolSize: 5, deadlineMs: TEST_STATEMENT_DEADLINE_MS });
  return {
    ...handle,
    close: async () => {
      await handle.close();
      await givePostgresBack(name);
    },
  };
}

/** A second, independent pool on the PostgreSQL database behind `handle`, as another process would open. */
export function secondPool(handle: DatabaseHandle): Promise<DatabaseHandle> {
  const o = (handle.db as unknown as { $client: { options: { host: string[]; port: number[]; database: string; user: string } } }).$client
    .options;
  return openDatabase({
    kind: 'postgres',
    url: `postgres://${o.user}@${o.host[0]}:${o.port[0]}/${o.database}`,
    poolSize: 5,
    deadlineMs: TEST_STATEMENT_DEADLINE_MS,
  });
}

export function openTestDatabase(kind: DatabaseKind): Promise<DatabaseHandle> {
  return kind === 'embedded' ? freshEmbedded() : freshPostgres();
}

/** Names of the user tables in the public schema, to check what migrations made. */
export async function tableNames(handle: DatabaseHandle): Promise<string[]> {
  const result = await handle.db.execute(
    sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
  );
  const rows = Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows;
  return (rows as { table_name: string }[]).map((r) => r.table_name);
}
