/**
 * A migrated, empty embedded database kept as a dump in the user's cache folder, so that a new data
 * directory (the first `market dev`, `--fresh`, a new `market registry` or `market facilitator`)
 * starts from it instead of running initdb and every migration: about 3 s of work, where loading
 * the dump takes a few hundred milliseconds.
 *
 * The dump holds the schema only (the migrations add no rows) and is taken right after the
 * migrations of a new directory, before anything else runs on it. It is named by PGlite's version
 * and the migrations' hash, so a change to either makes a new one; it is written aside and then
 * renamed, so a reader never sees half of one. A cache folder that cannot be written is no error:
 * the next new directory runs initdb again.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import { parseTar } from 'nanotar';
import type { PGlite } from '@electric-sql/pglite';
import { version as PGLITE_VERSION } from '../../node_modules/@electric-sql/pglite/package.json';
import { migrations } from '../../drizzle/migrations';
import { LOCK_FILE } from './lock';

let hash: string | undefined;

/** A hash of every migration's SQL, in order. */
export function migrationsHash(): string {
  if (hash !== undefined) return hash;
  const sha = createHash('sha256');
  for (const m of migrations) sha.update(m.sql);
  hash = sha.digest('hex').slice(0, 20);
  return hash;
}

/** Where the dump of this PGlite and these migrations is kept under `cacheDir`. */
export function templatePath(cacheDir: string): string {
  return join(cacheDir, 'pglite', `${PGLITE_VERSION}-${migrationsHash()}.tar`);
}

/**
 * The kept dump, or undefined when there is none or it cannot be trusted. The file is the dump
 * after 8 bytes of its hash (wyhash): a damaged file is never handed to PGlite, which fails on one
 * in a way that cannot be caught (a rejection of its own, outside `PGlite.create`).
 */
export async function readTemplate(cacheDir: string): Promise<Blob | undefined> {
  try {
    const file = Bun.file(templatePath(cacheDir));
    if (!(await file.exists())) return undefined;
    const bytes = new Uint8Array(await file.arrayBuffer());
    if (bytes.length <= 8) return undefined;
    const dump = bytes.subarray(8);
    const kept = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0);
    return kept === BigInt(Bun.hash(dump)) ? new Blob([dump]) : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps `dump` as the template (written aside, then renamed); a folder that cannot be written is skipped. */
export async function saveTemplate(cacheDir: string, dump: Blob): Promise<void> {
  const file = templatePath(cacheDir);
  const aside = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    const bytes = new Uint8Array(await dump.arrayBuffer());
    const header = new Uint8Array(8);
    new DataView(header.buffer).setBigUint64(0, BigInt(Bun.hash(bytes)));
    await mkdir(join(cacheDir, 'pglite'), { recursive: true });
    await Bun.write(aside, new Blob([header, bytes]));
    await rename(aside, file);
  } catch {
    await rm(aside, { force: true }).catch(() => {});
  }
}

/** Drops a template that PGlite could not start from. */
export async function dropTemplate(cacheDir: string): Promise<void> {
  await rm(templatePath(cacheDir), { force: true }).catch(() => {});
}

/**
 * Writes the dump's folders and files into `dataDir` (a new one, under its lock), as PGlite would
 * from `loadDataDir` but about ten times faster: the files are written by the runtime, not through
 * PGlite's WebAssembly file system. False, with nothing written, when the dump holds anything but
 * folders and files inside the directory.
 */
export async function extractTemplate(dump: Blob, dataDir: string): Promise<boolean> {
  const entries = parseTar(new Uint8Array(await dump.arrayBuffer()));
  const inside = (name: string) => {
    const path = normalize(name.replace(/^\/+/, ''));
    return path !== '' && path !== '.' && !path.startsWith('..') ? path : undefined;
  };
  if (!entries.every((e) => (e.type === 'file' || e.type === 'directory') && inside(e.name) !== undefined)) return false;
  const mode = (e: (typeof entries)[number], fallback: number) => {
    const octal = Number.parseInt(e.attrs?.mode ?? '', 8);
    return Number.isInteger(octal) ? octal & 0o700 : fallback;
  };
  for (const e of entries.filter((e) => e.type === 'directory')) {
    await mkdir(join(dataDir, inside(e.name)!), { recursive: true, mode: mode(e, 0o700) });
  }
  for (const e of entries.filter((e) => e.type === 'file')) {
    await writeFile(join(dataDir, inside(e.name)!), e.data ?? new Uint8Array(0), { mode: mode(e, 0o600) });
  }
  return true;
}

/** The dump of an open PGlite's data directory, uncompressed. */
export function dumpOf(client: PGlite): Promise<Blob> {
  return client.dumpDataDir('none');
}

/** True when `dataDir` holds no database yet (missing, empty, or only our lock file). */
export function isNewDataDir(dataDir: string): boolean {
  if (!existsSync(dataDir)) return true;
  return readdirSync(dataDir).every((entry) => entry === LOCK_FILE);
}

/** Empties a directory that held nothing but our lock file before PGlite started on it. */
export async function emptyNewDataDir(dataDir: string): Promise<void> {
  for (const entry of readdirSync(dataDir)) {
    if (entry !== LOCK_FILE) await rm(join(dataDir, entry), { recursive: true, force: true });
  }
}
