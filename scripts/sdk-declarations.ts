/**
 * Completes the SDK's declaration build: tsc writes `.d.ts` files whose relative imports keep the
 * sources' extensionless form (`./errors`), which TypeScript under `moduleResolution: node16`
 * cannot follow in an ES module package. This gives each one the path the built package has
 * (`./errors.js`, `./client/index.js`), and fails on any it cannot find.
 *
 *   bun scripts/sdk-declarations.ts sdk/dist
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\2/g;

function declarationFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.d.ts'))
    .map((name) => join(folder, name));
}

function completed(file: string, specifier: string): string {
  if (specifier.endsWith('.js')) return specifier;
  const base = resolve(dirname(file), specifier);
  if (existsSync(`${base}.d.ts`)) return `${specifier}.js`;
  if (existsSync(join(base, 'index.d.ts'))) return `${specifier.replace(/\/$/, '')}/index.js`;
  throw new Error(`${file}: no declaration for ${specifier}`);
}

const folder = resolve(process.argv[2] ?? 'sdk/dist');
let changed = 0;
for (const file of declarationFiles(folder)) {
  const text = readFileSync(file, 'utf8');
  const next = text.replace(SPECIFIER, (_, lead: string, quote: string, spec: string) => `${lead}${quote}${completed(file, spec)}${quote}`);
  if (next !== text) {
    writeFileSync(file, next);
    changed += 1;
  }
}
console.log(`sdk declarations: relative imports completed in ${changed} files under ${folder}`);
