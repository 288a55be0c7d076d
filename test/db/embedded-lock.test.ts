import { afterEach, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirectoryLockedError, openDatabase, type DatabaseHandle } from '../../src/db';
import { readTemplate } from '../../src/db/template';
import { seedEmbeddedDataDir } from '../support/database';

const dirs: string[] = [];
const handles: DatabaseHandle[] = [];
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'market-lock-'));
  dirs.push(dir);
  return dir;
}

/** A data directory already holding a migrated database (no initdb: the lock is what is tested). */
async function seededDataDir(): Promise<string> {
  const dataDir = join(tempDir(), 'data');
  await seedEmbeddedDataDir(dataDir);
  return dataDir;
}

describe('embedded database directory', () => {
  it('creates missing parent directories and keeps data across reopen; a cache folder that cannot be written keeps no template', async () => {
    const dataDir = join(tempDir(), 'nested', 'deeper', 'data');
    const cacheDir = join(tempDir(), 'a-file');
    writeFileSync(cacheDir, 'not a folder');
    const first = await openDatabase({ kind: 'embedded', dataDir, cacheDir });
    expect(await readTemplate(cacheDir)).toBeUndefined();
    expect(readFileSync(cacheDir, 'utf8')).toBe('not a folder');
    await first.db.execute(`insert into users (wallet_address) values ('0x00000000000000000000000000000000000000aa')` as never);
    await first.close();
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    const again = await openDatabase({ kind: 'embedded', dataDir });
    handles.push(again);
    const rows = await again.db.query.users.findMany();
    expect(rows.map((r) => r.walletAddress)).toEqual(['0x00000000000000000000000000000000000000aa']);
  }, 60_000);

  it('refuses a second opener at once, with a message naming the directory, while the first keeps working', async () => {
    const dataDir = await seededDataDir();
    const first = await openDatabase({ kind: 'embedded', dataDir });
    handles.push(first);
    // At once: a second opener waiting for the lock would time this test out.
    const second = openDatabase({ kind: 'embedded', dataDir });
    await expect(second).rejects.toBeInstanceOf(DataDirectoryLockedError);
    await expect(second).rejects.toThrow(`the embedded database in ${dataDir} is already in use by another process`);
    await first.ping();
  }, 60_000);

  it('frees the directory when the holder closes', async () => {
    const dataDir = await seededDataDir();
    const first = await openDatabase({ kind: 'embedded', dataDir });
    await first.close();
    const second = await openDatabase({ kind: 'embedded', dataDir });
    handles.push(second);
    await second.ping();
  }, 60_000);
});
