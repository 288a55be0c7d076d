/**
 * The SDK checked as its users get it: `npm pack` of sdk/, installed into fresh temporary
 * projects outside this repository (one by npm and run by Node, one by `bun add` and run by Bun)
 * with nothing else of ours, only viem beside it (Bun's from its cache, npm's this repository's).
 * There the declarations type-check a file using every public export under `strict` with `moduleResolution` node16 and
 * bundler; every entry imports from plain JavaScript; and a creator serve() takes a paid call
 * from a consumer against the local registry, facilitator and chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  BROWSER_SUBPATHS,
  browserFile,
  bundleForBrowser,
  CONSUMER_BUDGET_BYTES,
  packSdk,
  sdkBuildIsFresh,
  sdkManifest,
  sdkSpecifiers,
  TARBALL_BUDGET_BYTES,
  type Packed,
} from '../../scripts/sdk-package';
import { NETWORK, useWorld } from '../client/support/world';
import { everyExportModule, type PublicExport, publicExports } from './exports';

const REPO = resolve(import.meta.dir, '../..');
const TSC = join(REPO, 'node_modules/.bin/tsc');
const BUN = process.execPath;
const world = useWorld({ chain: true });

let folder: string;
let packed: Packed;
let specifiers: string[];
let exports: Record<string, PublicExport[]>;
const projects = { node: '', bun: '' };

/**
 * What a child needs of this environment: the path, the home (the installers' caches and
 * settings), the network's proxies and certificates, and npm's registry and cache; not the rest of
 * npm's variables (under `npm test` they describe this repository's package).
 */
const PASSED = /^(PATH|HOME|TMPDIR|https?_proxy|no_proxy|NODE_EXTRA_CA_CERTS|npm_config_(registry|cache|userconfig))$/i;
const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => PASSED.test(name))) as Record<string, string>;

async function run(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const child = Bun.spawn(argv, {
    cwd,
    env: { HOME: '/tmp', ...inherited, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

/**
 * A new project folder with the tarball and viem installed, nothing else of ours: by npm for the
 * Node project (with Node's types, for the type checks), by Bun's own installer for the Bun one.
 * Both take what their caches hold and fetch only what is missing. npm's viem is this repository's
 * (the same version, linked: npm writing viem's 12,000 files took about 20 s of CPU here, its own
 * peer install skipped for it), its other packages npm's own.
 */
async function installProject(runtime: 'node' | 'bun'): Promise<string> {
  const dir = join(folder, runtime);
  await mkdir(dir);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `sdk-user-${runtime}`, private: true, type: 'module' }));
  const lock = JSON.parse(await readFile(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
  const viem = `viem@${lock.packages['node_modules/viem']!.version}`;
  const nodeTypes = `@types/node@${lock.packages['node_modules/@types/node']!.version}`;
  const argv =
    runtime === 'node'
      ? ['npm', 'install', '--prefer-offline', '--no-audit', '--no-fund', '--legacy-peer-deps', packed.file, nodeTypes]
      : [BUN, 'add', '--prefer-offline', packed.file, viem];
  const install = await run(argv, dir);
  if (install.code !== 0) throw new Error(`${argv.slice(0, 2).join(' ')} in ${dir} failed: ${install.stderr}`);
  if (runtime === 'node') await symlink(join(REPO, 'node_modules/viem'), join(dir, 'node_modules/viem'), 'dir');
  return dir;
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'sdk-installed-'));
  // CI builds the package before the tests (npm run build); a pack builds it again only when stale.
  packed = await packSdk(folder, { build: !(await sdkBuildIsFresh()) });
  specifiers = await sdkSpecifiers();
  [projects.node, projects.bun] = await Promise.all([installProject('node'), installProject('bun')]);
  exports = publicExports(projects.node, specifiers);
}, 240_000);

afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('the packed SDK', () => {
  it('is the built package alone, under its size budget, installing only its own dependencies', async () => {
    expect(packed.size).toBeLessThan(TARBALL_BUDGET_BYTES);
    expect(packed.files).toContain('package.json');
    expect(packed.files.filter((file) => !/^(dist\/.+\.(js|d\.ts)|package\.json|README\.md)$/.test(file))).toEqual([]);
    expect(packed.files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    const installed = JSON.parse(await readFile(join(projects.node, 'node_modules/skill-market/package.json'), 'utf8')) as {
      version: string;
      private?: boolean;
      sideEffects: unknown;
      peerDependencies: Record<string, string>;
    };
    expect(installed.version).toBe((await sdkManifest()).version);
    expect(installed.private).toBeUndefined();
    expect(installed.sideEffects).toBe(false);
    expect(Object.keys(installed.peerDependencies)).toEqual(['viem']);
    const present = await readdir(join(projects.node, 'node_modules'));
    for (const server of ['elysia', 'postgres', 'jose', 'drizzle-orm', '@electric-sql', 'preact', 'skill-market-server']) {
      expect(present).not.toContain(server);
    }
  });

  it('declares every entry: a file using every public export type-checks under strict with node16 and bundler resolution', async () => {
    for (const specifier of specifiers) expect(exports[specifier]?.length ?? 0).toBeGreaterThan(0);
    const dir = projects.node;
    await writeFile(join(dir, 'every-export.ts'), everyExportModule(exports));
    await copyFile(join(import.meta.dir, 'fixtures/uses.ts'), join(dir, 'uses.ts'));
    // Wrong on purpose: real declarations (not `any`) refuse it.
    await writeFile(
      join(dir, 'wrong.ts'),
      "import { parsePrice } from 'skill-market/x402';\nimport { SkillMarket } from 'skill-market';\nexport const units: string = parsePrice('$1');\nexport const market = new SkillMarket({ apiUrl: 42 });\n",
    );
    const base = { strict: true, target: 'ES2022', lib: ['ES2023', 'DOM'], types: ['node'], noEmit: true, skipLibCheck: false };
    const modes = {
      node16: { ...base, module: 'node16', moduleResolution: 'node16' },
      bundler: { ...base, module: 'preserve', moduleResolution: 'bundler' },
    };
    // One compilation per mode, side by side: the misuse in wrong.ts must be its only complaints. One
    // checker each (tsc's default of four types the shared declarations four times over).
    const checks = await Promise.all(
      Object.entries(modes).map(async ([mode, compilerOptions]) => {
        await writeFile(
          join(dir, `tsconfig.${mode}.json`),
          JSON.stringify({ compilerOptions, files: ['every-export.ts', 'uses.ts', 'wrong.ts'] }),
        );
        return { mode, ...(await run([TSC, '-p', `tsconfig.${mode}.json`, '--checkers', '1'], dir)) };
      }),
    );
    for (const { mode, stdout, code } of checks) {
      // Complaints start a line with the file's name; their continuation lines are indented.
      const complaints = stdout.split('\n').filter((line) => /^\S/.test(line));
      expect({ mode, elsewhere: complaints.filter((line) => !line.startsWith('wrong.ts(')) }).toEqual({ mode, elsewhere: [] });
      expect(code).not.toBe(0);
      expect(complaints).toContain("wrong.ts(3,14): error TS2322: Type 'bigint' is not assignable to type 'string'.");
      expect(complaints).toContain("wrong.ts(4,41): error TS2322: Type 'number' is not assignable to type 'string'.");
    }
  }, 180_000);

  it('bundles for a web page: no entry but the creator reaches a Node built-in; the consumer import is under its budget', async () => {
    const installed = join(projects.node, 'node_modules/skill-market');
    for (const subpath of BROWSER_SUBPATHS) {
      const bundle = await bundleForBrowser(await browserFile(subpath, installed));
      expect({ subpath, builtins: bundle.builtins }).toEqual({ subpath, builtins: [] });
      if (subpath === '.') expect(bundle.gzipBytes).toBeLessThan(CONSUMER_BUDGET_BYTES);
    }
    // The check sees built-ins: the creator (a server) reaches node:http and node:fs.
    const creator = await bundleForBrowser(join(installed, 'dist/creator/index.js'));
    expect(creator.builtins).toEqual(expect.arrayContaining(['node:fs', 'node:http']));
  }, 60_000);

  for (const runtime of ['node', 'bun'] as const) {
    it(`imports every entry from plain JavaScript on ${runtime}, each export its declarations name`, async () => {
      const script = join(projects[runtime], 'import-all.mjs');
      await copyFile(join(import.meta.dir, 'fixtures/import-all.mjs'), script);
      const result = await run([runtime === 'node' ? 'node' : BUN, script, JSON.stringify(specifiers)], projects[runtime]);
      expect(result.stderr).toBe('');
      const names = JSON.parse(result.stdout) as Record<string, string[]>;
      for (const specifier of specifiers) {
        const values = (exports[specifier] ?? []).filter((e) => e.value).map((e) => e.name);
        expect({ specifier, names: names[specifier] }).toEqual({ specifier, names: values.sort() });
      }
    }, 60_000);

    it(`serves a skill with serve() and pays a call to it with SkillMarket on ${runtime}, against the local registry, facilitator and chain`, async () => {
      const payee = await world.chain.createAccount();
      await world.creator.prove(payee);
      const payer = await world.payer(1_000_000n);
      const script = join(projects[runtime], 'serve-and-call.mjs');
      await copyFile(join(import.meta.dir, 'fixtures/serve-and-call.mjs'), script);
      const result = await run([runtime === 'node' ? 'node' : BUN, script], projects[runtime], {
        SKILL_NAME: `installed-${runtime}-${crypto.randomUUID().slice(0, 6)}`,
        PAY_TO: payee.address,
        PAYER_KEY: payer.privateKey,
        FACILITATOR_URL: world.facilitatorUrl,
        MARKET_API_URL: world.registryUrl,
        CREATOR_KEY: world.creator.key,
        CONSUMER_KEY: world.consumerKey,
        GROUP: world.group,
        MARKET_NETWORK: NETWORK,
        MARKET_ASSET: JSON.stringify(world.asset),
      });
      if (result.code !== 0) throw new Error(`${runtime} exited ${result.code}: ${result.stderr}`);
      const outcome = JSON.parse(result.stdout) as {
        runtime: string;
        slug: string;
        result: unknown;
        receipt: { amount: string; transaction: string };
        spent: string;
      };
      expect(outcome.runtime).toStartWith(`${runtime} `);
      expect(outcome.result).toEqual({ greeting: `hello ${runtime}` });
      expect(outcome.receipt).toMatchObject({ amount: '10000', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      expect(outcome.spent).toBe('10000');
      expect(await world.chain.balanceOf(payee.address)).toBe(10_000n);
      expect(await world.chain.balanceOf(payer.address)).toBe(990_000n);
    }, 60_000);
  }
});
