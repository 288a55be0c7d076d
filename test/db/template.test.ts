/**
 * A new embedded data directory starts from the migrated template kept in the cache folder
 * (src/db/template.ts): made by the first new directory, used by the next, dropped and made again
 * when PGlite cannot start from it, never read when damaged, never used for a directory that
 * already holds a database. A cache folder that cannot be written: test/db/embedded-lock.test.ts.
 */
import { afterEach, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { createTar } from 'nanotar';
import { migrations } from '../../drizzle/migrations';
import { openDatabase, openPGlite, type DatabaseHandle } from '../../src/db';
import { migratedDump } from '../support/database';
import { resultRows } from '../../src/db/rows';
import { dumpOf, readTemplate, saveTemplate, templatePath } from '../../src/db/template';
import { readCacheDir } from '../../src/config/database';

const dirs: string[] = [];
const handles: DatabaseHandle[] = [];
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'market-template-'));
  dirs.push(dir);
  return dir;
}

async function open(dataDir: string, cacheDir: string): Promise<DatabaseHandle> {
  const handle = await openDatabase({ kind: 'embedded', dataDir, cacheDir });
  handles.push(handle);
  return handle;
}

const appliedMigrations = async (handle: DatabaseHandle) =>
  Number(resultRows<{ n: number }>(await handle.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`))[0]!.n);

const tableExists = async (handle: DatabaseHandle, name: string) =>
  resultRows<{ found: boolean }>(await handle.db.execute(sql`select to_regclass(${name}) is not null as found`))[0]!.found;

/**
 * Keeps the migrated schema as the template of `cacheDir` (from the tests' own dump: no initdb),
 * with a table no migration makes when `marked`: a directory made from it has that table.
 */
async function keepTemplate(cacheDir: string, marked: boolean): Promise<void> {
  const memory = await openPGlite(undefined, { loadDataDir: await migratedDump() });
  try {
    if (marked) await memory.client.exec('create table from_the_template (id int)');
    await saveTemplate(cacheDir, await dumpOf(memory.client));
  } finally {
    await memory.client.close();
  }
}

describe('the migrated template for new embedded data directories', () => {
  it('is made by a new directory when there is none it can start from, kept under the cache folder, and used by the next', async () => {
    const cacheDir = join(tempDir(), 'cache');
    // Kept with its hash, well formed, but no database PGlite can open: it is dropped, and the
    // directory is made by initdb and the migrations, whose dump becomes the template.
    await saveTemplate(cacheDir, new Blob([createTar([{ name: 'PG_VERSION', data: '9\n' }, { name: 'base/' }])]));
    const first = await open(join(tempDir(), 'data'), cacheDir);
    expect(await appliedMigrations(first)).toBe(migrations.length);
    expect(await tableExists(first, 'users')).toBe(true);
    expect(templatePath(cacheDir).startsWith(join(cacheDir, 'pglite'))).toBe(true);
    expect(existsSync(templatePath(cacheDir))).toBe(true);

    // A directory made from it is a working database with every migration and no rows.
    const second = await open(join(tempDir(), 'data'), cacheDir);
    expect(await appliedMigrations(second)).toBe(migrations.length);
    expect(await second.db.query.users.findMany()).toEqual([]);
    await second.db.execute(sql`insert into users (wallet_address) values ('0x00000000000000000000000000000000000000aa')`);
    expect((await second.db.query.users.findMany()).length).toBe(1);
  }, 60_000);

  it('is what the next new directory starts from, and keeps what is written there across reopen', async () => {
    const cacheDir = join(tempDir(), 'cache');
    await keepTemplate(cacheDir, true);
    const dataDir = join(tempDir(), 'data');
    const made = await open(dataDir, cacheDir);
    expect(await tableExists(made, 'from_the_template')).toBe(true);
    await made.db.execute(sql`insert into users (wallet_address) values ('0x00000000000000000000000000000000000000bb')`);
    await made.close();

    const again = await open(dataDir, cacheDir);
    expect((await again.db.query.users.findMany()).map((u) => u.walletAddress)).toEqual(['0x00000000000000000000000000000000000000bb']);
  }, 60_000);

  it('is not used for a directory that already holds a database', async () => {
    const cacheDir = join(tempDir(), 'cache');
    const dataDir = join(tempDir(), 'data');
    await keepTemplate(cacheDir, false);
    await (await open(dataDir, cacheDir)).close();
    handles.pop();
    await keepTemplate(cacheDir, true);
    const reopened = await open(dataDir, cacheDir);
    expect(await tableExists(reopened, 'from_the_template')).toBe(false);
  }, 60_000);

  it('is not read when the kept file is damaged (its hash no longer matches)', async () => {
    const cacheDir = join(tempDir(), 'cache');
    await keepTemplate(cacheDir, false);
    expect(await readTemplate(cacheDir)).toBeDefined();
    const kept = readFileSync(templatePath(cacheDir));
    const middle = kept.length >> 1;
    kept[middle] = kept[middle]! ^ 0xff; // one byte flipped in the middle of the dump
    writeFileSync(templatePath(cacheDir), kept);
    expect(await readTemplate(cacheDir)).toBeUndefined();
    writeFileSync(templatePath(cacheDir), kept.subarray(0, 4));
    expect(await readTemplate(cacheDir)).toBeUndefined();
  });

  it('lives under XDG_CACHE_HOME, else HOME/.cache', () => {
    expect(readCacheDir({ XDG_CACHE_HOME: '/xdg', HOME: '/home/a' })).toBe('/xdg/skill-market');
    expect(readCacheDir({ XDG_CACHE_HOME: 'relative', HOME: '/home/a' })).toBe('/home/a/.cache/skill-market');
    expect(readCacheDir({ HOME: '/home/b' })).toBe('/home/b/.cache/skill-market');
  });
});
