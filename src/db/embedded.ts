import { readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
// Imported as files so `bun build --compile` embeds them; PGlite cannot find them inside a binary.
import pgliteWasmPath from '@electric-sql/pglite/pglite.wasm' with { type: 'file' };
import initdbWasmPath from '@electric-sql/pglite/initdb.wasm' with { type: 'file' };
import fsBundlePath from '@electric-sql/pglite/pglite.data' with { type: 'file' };
// pg_trgm (typo-tolerant search), embedded the same way; the package exports no path for it.
import trigramBundlePath from '../../node_modules/@electric-sql/pglite/dist/pg_trgm.tar.gz' with { type: 'file' };
import { lockDataDirectory } from './lock';

let assets: Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> | undefined;

/** PGlite's WebAssembly and file bundle, compiled once per process. */
function loadAssets() {
  assets ??= (async () => {
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      WebAssembly.compile(readFileSync(pgliteWasmPath)),
      WebAssembly.compile(readFileSync(initdbWasmPath)),
    ]);
    return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([readFileSync(fsBundlePath)]) };
  })();
  return assets;
}

/**
 * Where PGlite can stream the pg_trgm bundle from. Inside the compiled binary the embedded file
 * can be read whole but not streamed, as PGlite does, so it is copied out once into the temporary
 * directory under a name made of its hash (written aside, then renamed: concurrent starts agree).
 */
function trigramBundle(): URL {
  if (!trigramBundlePath.startsWith('/$bunfs/')) return pathToFileURL(trigramBundlePath);
  const bytes = readFileSync(trigramBundlePath);
  const copy = join(tmpdir(), `market-pg_trgm-${Bun.hash(bytes).toString(36)}.tar.gz`);
  if (!existsSync(copy)) {
    const aside = `${copy}.${process.pid}`;
    writeFileSync(aside, bytes, { mode: 0o644 });
    renameSync(aside, copy);
  }
  return pathToFileURL(copy);
}

export interface OpenPGliteOptions {
  /** A dump to start from (PGlite writes it into an empty `dataDir`, or into memory). */
  loadDataDir?: Blob;
  /** Run on `dataDir` under its lock, before PGlite starts on it (template.ts fills a new one). */
  prepare?: (dataDir: string) => Promise<void>;
}

/**
 * Opens PGlite on `dataDir` (created with its parents) under an exclusive directory lock, or
 * in memory when `dataDir` is undefined.
 */
export async function openPGlite(
  dataDir: string | undefined,
  options: OpenPGliteOptions = {},
): Promise<{ client: PGlite; release(): void }> {
  let release = () => {};
  if (dataDir !== undefined) {
    await mkdir(dataDir, { recursive: true });
    release = lockDataDirectory(dataDir).release;
  }
  try {
    if (dataDir !== undefined) await options.prepare?.(dataDir);
    const client = await PGlite.create(dataDir, {
      ...(await loadAssets()),
      extensions: { pg_trgm: { name: 'pg_trgm', setup: async () => ({ bundlePath: trigramBundle() }) } },
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    });
    return { client, release };
  } catch (error) {
    release();
    throw error;
  }
}
