/**
 * Values @x402/evm keeps in its bundle without exporting them from a public entry point (its
 * batch-settlement ABI, the withdraw-delay bounds, the ChannelConfig typed-data types): found by
 * name in the package's ESM chunks (chunk file names change between builds, the names do not).
 */
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/** The value `@x402/evm` binds to `name` in one of its ESM chunks. */
export async function x402EvmInternal<T>(name: string): Promise<T> {
  // The package's exports map hides package.json; its CommonJS entry sits at dist/cjs/index.js.
  const esm = join(dirname(require.resolve('@x402/evm')), '..', 'esm');
  for (const file of (await readdir(esm)).filter((f) => f.endsWith('.mjs')).sort()) {
    const path = join(esm, file);
    if (!(await readFile(path, 'utf8')).includes(`var ${name} =`)) continue;
    const chunk = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    if (name in chunk) return chunk[name] as T;
  }
  throw new Error(`@x402/evm binds no ${name} in ${esm}`);
}
