/**
 * The SDK's API reference is read from its declarations: built here from the sources (the
 * package's own declaration build, into a temporary copy of the package), every export of every
 * entry carries a doc comment, and every value a user imports (function, class, constant; not a
 * TypeBox schema) shows an `@example`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { copyFile, cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SDK_DIR, sdkBuildIsFresh, sdkSpecifiers } from '../../scripts/sdk-package';
import { type ExportDocs, exportDocs } from './exports';

const REPO = resolve(import.meta.dir, '../..');

let folder: string;
let project: string;
let docs: Record<string, ExportDocs[]>;

async function run(argv: string[], cwd: string): Promise<void> {
  const child = Bun.spawn(argv, { cwd, stdout: 'pipe', stderr: 'pipe' });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}: ${stdout}${stderr}`);
}

/** The SDK's declarations, built as `npm run build:types` builds them, in `<project>/node_modules/skill-market`. */
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'sdk-examples-'));
  project = join(folder, 'project');
  const installed = join(project, 'node_modules/skill-market');
  await mkdir(installed, { recursive: true });
  // The SDK's dependencies (viem, TypeBox, ajv) resolve from the repository's node_modules.
  await symlink(join(REPO, 'node_modules'), join(folder, 'node_modules'));
  await copyFile(join(SDK_DIR, 'package.json'), join(installed, 'package.json'));
  const dist = join(installed, 'dist');
  if (await sdkBuildIsFresh()) {
    // npm run build (CI runs it before the tests) made these declarations from the current sources.
    await cp(join(SDK_DIR, 'dist'), dist, { recursive: true });
  } else {
    await run([join(SDK_DIR, 'node_modules/.bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', dist], SDK_DIR);
    await run([process.execPath, join(REPO, 'scripts/sdk-declarations.ts'), dist], REPO);
  }
  docs = exportDocs(project, await sdkSpecifiers());
}, 120_000);

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

const missing = (pick: (e: ExportDocs) => boolean) =>
  Object.entries(docs).flatMap(([specifier, list]) => list.filter(pick).map((e) => `${specifier}: ${e.name}`));

describe('the SDK declarations', () => {
  it('give every value export of every entry a doc comment with an @example (TypeBox schemas excepted)', async () => {
    for (const specifier of await sdkSpecifiers())
      expect({ specifier, values: docs[specifier]?.some((e) => e.value) }).toEqual({ specifier, values: true });
    expect(missing((e) => e.value && !e.schema && !e.tags.includes('example'))).toEqual([]);
  });

  it('give every export of every entry, values and types, a doc comment', () => {
    expect(missing((e) => !e.documented)).toEqual([]);
  });

  it('tell TypeBox schemas from other values, and values from types', () => {
    const x402 = new Map(docs['skill-market/x402']!.map((e) => [e.name, e]));
    expect(x402.get('RequirementsSchema')).toMatchObject({ value: true, schema: true });
    expect(x402.get('parsePrice')).toMatchObject({ value: true, schema: false });
    expect(x402.get('X402Error')).toMatchObject({ value: true, schema: false });
    expect(x402.get('PaymentRequirements')).toMatchObject({ value: false, schema: false });
    const registry = new Map(docs['skill-market/registry']!.map((e) => [e.name, e]));
    expect(registry.get('SkillView')).toMatchObject({ value: true, schema: true });
    expect(registry.get('Uuid')).toMatchObject({ value: true, schema: false });
  });

  it('finds a declaration without a doc comment or an example', async () => {
    const fixture = join(project, 'node_modules/undocumented');
    await mkdir(fixture, { recursive: true });
    await writeFile(join(fixture, 'package.json'), JSON.stringify({ name: 'undocumented', types: 'index.d.ts' }));
    await writeFile(
      join(fixture, 'index.d.ts'),
      [
        'export declare function bare(): void;',
        '/** Documented, no example. */',
        'export declare const LIMIT = 8;',
        '/**',
        ' * Documented with an example.',
        ' *',
        ' * @example',
        ' * shown(); // 1',
        ' */',
        'export declare function shown(): number;',
        'export type Plain = string;',
      ].join('\n'),
    );
    const [found] = Object.values(exportDocs(project, ['undocumented']));
    expect(found!.map(({ name, value, documented, tags }) => ({ name, value, documented, example: tags.includes('example') }))).toEqual([
      { name: 'bare', value: true, documented: false, example: false },
      { name: 'LIMIT', value: true, documented: true, example: false },
      { name: 'Plain', value: false, documented: false, example: false },
      { name: 'shown', value: true, documented: true, example: true },
    ]);
  });
});
