/**
 * The import boundaries `npm run lint` enforces (scripts/check-boundaries.ts): the tree passes, and
 * a deliberate violation of each, written into a temporary tree, fails.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { checkBoundaries } from '../../scripts/check-boundaries';

const ROOT = resolve(import.meta.dir, '../..');
const made: string[] = [];

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A temporary tree holding `files` (path → text). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'boundaries-'));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** A tree where `from` imports `to` (a relative import), and both exist. */
function importing(from: string, to: string, how = 'import { x } from'): string {
  let specifier = relative(dirname(from), to).replace(/\.ts$/, '');
  if (!specifier.startsWith('.')) specifier = `./${specifier}`;
  return tree({ [from]: `${how} '${specifier}';\nexport const y = 1;\n`, [to]: 'export const x = 1;\n' });
}

describe('the import boundaries', () => {
  it('hold on the tree as it is', () => {
    expect(checkBoundaries(ROOT)).toEqual([]);
  });

  const forbidden: [string, string][] = [
    ['src/facilitator/settle.ts', 'src/registry/app.ts'],
    ['src/registry/app.ts', 'src/facilitator/create.ts'],
    ['src/facilitator/service.ts', 'src/facilitator/schemes/exact/scheme.ts'],
    ['src/facilitator/routes.ts', 'src/facilitator/schemes/channel/index.ts'],
    ['src/facilitator/schemes/exact/settle.ts', 'src/facilitator/schemes/channel/sender.ts'],
    ['src/facilitator/schemes/channel/sender.ts', 'src/facilitator/schemes/exact/store.ts'],
    ['sdk/x402/codec.ts', 'sdk/client/market.ts'],
    ['sdk/x402/codec.ts', 'sdk/creator/serve.ts'],
    ['sdk/x402/codec.ts', 'sdk/payment/call.ts'],
    ['sdk/client/market.ts', 'sdk/creator/serve.ts'],
    ['sdk/payment/call.ts', 'sdk/creator/serve.ts'],
    ['sdk/creator/serve.ts', 'sdk/client/market.ts'],
    ['sdk/creator/serve.ts', 'sdk/payment/call.ts'],
    ['sdk/http/errors.ts', 'sdk/client/types.ts'],
    ['sdk/http/errors.ts', 'sdk/payment/types.ts'],
    ['sdk/wallet/keystore.ts', 'src/config/index.ts'],
    ['src/mcp/print-config.ts', 'src/cli/credentials.ts'],
    ['src/dev/stack.ts', 'src/cli/skill-module.ts'],
    ['test/mcp/support.ts', 'src/cli/main.ts'],
  ];
  for (const [from, to] of forbidden) {
    it(`fail when ${from} imports ${to}`, () => {
      expect(checkBoundaries(importing(from, to))).toEqual([expect.objectContaining({ file: from })]);
    });
  }

  it('see type-only, multi-line, re-exporting and dynamic imports', () => {
    const hows = ['import type { x } from', 'import {\n  x,\n  type X,\n} from', 'export { x } from', 'export * from'];
    for (const how of hows) {
      expect(checkBoundaries(importing('sdk/http/errors.ts', 'sdk/client/types.ts', how))).toHaveLength(1);
    }
    const dynamic = tree({ 'src/dev/stack.ts': "await import('../cli/main');\n", 'src/cli/main.ts': 'export {};\n' });
    expect(checkBoundaries(dynamic)).toHaveLength(1);
  });

  it('let the CLI and its tests import the CLI, the SDK use its own lower parts, and the facilitator compose its schemes', () => {
    for (const [from, to] of [
      ['src/cli/commands/serve.ts', 'src/cli/credentials.ts'],
      ['test/cli/dev-flag.test.ts', 'src/cli/dev-flag.ts'],
      ['sdk/payment/call.ts', 'sdk/http/errors.ts'],
      ['sdk/x402/errors.ts', 'sdk/http/errors.ts'],
      ['sdk/creator/errors.ts', 'sdk/http/errors.ts'],
      ['src/registry/app.ts', 'src/http/index.ts'],
      ['src/facilitator/create.ts', 'src/facilitator/schemes/exact/index.ts'],
      ['src/facilitator/schemes/channel/sender.ts', 'src/facilitator/relayer.ts'],
    ]) {
      expect(checkBoundaries(importing(from!, to!))).toEqual([]);
    }
  });

  it('fail on registry modules that import each other, directly or around a circle', () => {
    const both = tree({
      'src/registry/modules/skills/service.ts': "import { a } from '../analytics';\nexport const s = 1;\n",
      'src/registry/modules/analytics/index.ts': "import { s } from '../skills/service';\nexport const a = 1;\n",
    });
    expect(checkBoundaries(both)).toEqual([expect.objectContaining({ file: 'src/registry/modules/{analytics,skills}' })]);

    const around = tree({
      'src/registry/modules/auth/index.ts': "import type { U } from '../users';\nexport const a = 1;\n",
      'src/registry/modules/users/index.ts': "import { g } from '../groups';\nexport type U = 1;\n",
      'src/registry/modules/groups/index.ts': "import { a } from '../auth';\nexport const g = 1;\n",
    });
    expect(checkBoundaries(around)).toEqual([expect.objectContaining({ file: 'src/registry/modules/{auth,groups,users}' })]);

    const oneWay = tree({
      'src/registry/modules/analytics/index.ts': "import { s } from '../skills';\nexport const a = 1;\n",
      'src/registry/modules/skills/index.ts': 'export const s = 1;\n',
    });
    expect(checkBoundaries(oneWay)).toEqual([]);
  });

  it('fail on config readers that import each other', () => {
    const circle = tree({
      'src/config/registry.ts': "import { readAuth } from './auth';\nexport type RunMode = 'test';\n",
      'src/config/auth.ts': "import type { RunMode } from './registry';\nexport const readAuth = 1;\n",
    });
    expect(checkBoundaries(circle)).toEqual([expect.objectContaining({ file: 'src/config/auth.ts, src/config/registry.ts' })]);
  });

  it('make the script exit 1 naming the violation, and 0 on the tree', async () => {
    const bad = importing('src/facilitator/settle.ts', 'src/registry/app.ts');
    const failing = Bun.spawnSync(['bun', join(ROOT, 'scripts/check-boundaries.ts'), bad], { stderr: 'pipe' });
    expect(failing.exitCode).toBe(1);
    expect(failing.stderr.toString()).toContain('src/facilitator/settle.ts: imports ../registry/app');
    const passing = Bun.spawnSync(['bun', join(ROOT, 'scripts/check-boundaries.ts'), ROOT], { stdout: 'pipe' });
    expect(passing.exitCode).toBe(0);
  });
});
