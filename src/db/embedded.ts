import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
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
 * Opens PGlite on `dataDir` (created with its parents) under an exclusive directory lock, or
 * in memory when `dataDir` is undefined. `loadDataDir` starts from a dump (used by tests).
 */
export async function openPGlite(dataDir: string | undefined, loadDataDir?: Blob): Promise<{ client: PGlite; release(): void }> {
  let release = () => {};
  if (dataDir !== undefined) {
    await mkdir(dataDir, { recursive: true });
    release = lockDataDirectory(dataDir).release;
  }
  try {
    const client = await PGlite.create(dataDir, {
      ...(await loadAssets()),
      extensions: { pg_trgm: { name: 'pg_trgm', setup: async () => ({ bundlePath: pathToFileURL(trigramBundlePath) }) } },
      ...(loadDataDir ? { loadDataDir } : {}),
    });
    return { client, release };
  } catch (error) {
    release();
    throw error;
  }
}
