/**
 * The SDK as its users get it: the packed tarball (`npm pack` of the workspace package in sdk/,
 * built by its prepack script) and bundles of its built entries for a web page. Used by
 * scripts/sdk-size.ts (the size budget) and test/package (the installed package).
 */
import { readdir, stat } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

export const SDK_DIR = resolve(import.meta.dir, '../sdk');

/** Budgets: the packed tarball, and the consumer entry for a page (minified, gzipped, viem left out). */
// 204 kB and 64 kB: the skill server declares itself to x402 catalogues (the bazaar declaration builder and its body
// sampler, /.well-known/x402, the OpenAPI document with x-payment-info: +4.8 kB packed), and the registry's route table
// came in (every route's method, path, schemas, access and summary, which the registry declares its routes from and the
// client sends them by), and the channel store became a journal with group commit and a kept-key voucher check (+2.3 kB),
// then amounts in the token's atomic units with its decimals from one place and the client's voucher signed ahead (+1.9 kB).
// 212 kB: channels became a first-class payment: the skill server's schemes as plug-ins behind one pipeline, the channel
// store a facilitator keeps for a payee's several servers, a channel call's stored answer for a resend, and the payer's
// cooperative refund (+6.4 kB packed; the refund is loaded by the consumer bundle only when asked). 218 kB: a channel
// call's usage record and webhook in their own forms (the contract's channel fields, call.paid as a union, the record built
// from a receipt) and one deposit policy shown before paying (+3 kB). 224 kB: nothing lost at a crash on channels: the call
// records' durable outbox kept in the channel states and sent again after a restart, a checksum on every journal record and
// snapshot line with the damage reports and the repair, and the chain deciding where the state and a payment disagree
// (+5.9 kB packed, the skill server's side only). 230 kB: the skill server found by every crawler (a complete OpenAPI
// document with contact and agent guidance, a page and an icon at its root, Allow on every 405) and saying at start what
// catalogues would drop (+2.2 kB packed, the skill server's side only). 236 kB: the moderation routes in the wire contract
// (reports, the operators' queue, decisions and audit log, a creator's standing: their schemas and declarations, +2.8 kB
// packed; nothing of it in the consumer's browser bundle), and listings' uptime and recent success. 238 kB: usage-based
// prices (x402 `upto`: the Permit2 authorization's types and parser, the skill server's scheme and the client's, +4.1 kB).
// 242 kB: the skill server's metrics (serve()'s `observe` and `routes` options and its channel backlog reading, +2.4 kB
// packed, the skill server's side only; the Prometheus format itself stays in the CLI). Of the tarball, about half is
// the declarations with their documentation, which editors show. 250 kB: signed receipts on every paid answer (the
// EIP-712 receipt type, its signing, reading and checks in x402, the skill server's receipt key and signing, the
// client's check and ReceiptError, the receipt in the call and usage records' contract, the offer-receipt extension's
// own receipt beside ours: +8.6 kB packed). 262 kB: free trials and volume prices (x402 `sign-in-with-x`: the
// EIP-4361 message, its header and check; the skill server's trial gate, its durable plans store and tier pricing;
// the client's sign-in before paying; the listing's trial and tiers in the contract, +10.8 kB packed). 264 kB: the
// three merged together with `skill({ exact: false })`, a scheme's `quotedPayer` and a channel's confirmed charge in
// the receipt and the budget (262.5 kB). 265 kB: editing a listing's trial and tiers (the skill server's `setPlans`
// and its following of the listing's, `updateSkill`'s trial and tiers; 264.0 kB with them, the skill server's side only).
// 266 kB: the client's address behind trusted proxies, one function for the registry and the skill server's trial bound
// (265.0 kB with it). 267 kB: a listing's `usageBased` (contract, `priceLabel`, `updateSkill`) and the pipeline's memory
// of used-up free trials (`UsedTrials`, `X-Trial-Resets-At`), their doc comments cut to the essentials. 268 kB: the tier
// that priced each paid call in its record, and the contract's splits of a skill's analytics by scheme and tier,
// receipt checks on payments and usage records, the `receipt.mismatch` event (+0.4 kB packed; 267.4 kB with them).
// 270 kB: receipts signed and checked with less CPU (x402/receipt-digest.ts, the receipts' EIP-712 digest computed
// directly, and the buyer's check against a kept key, x402/signer-keys.ts, both loaded at first use; 268.5 kB with
// them, give or take 0.8 kB as the chunks' content-hashed names order the tarball).
export const TARBALL_BUDGET_BYTES = 270 * 1024;
// 66 kB for a page's consumer entry: the registry contract's calendar days (a revenue export's bounds checked where they
// are declared), the payment header read once for every scheme, and SkillMarket.refundChannel's door to the lazily
// loaded refund (+1.6 kB). 68 kB: a channel call's usage record in its own form, and the deposit said before paying.
// 69.5 kB: the client's `upto` scheme (SkillMarket's `payment: 'upto'`: its signing, receipt amount and the Permit2
// hint, +1.2 kB). 71 kB: the buyer's check of a skill server's signed receipt (EIP-712 recovery of the receipt type, the
// header's reader, ReceiptError, +1.7 kB). 72 kB: the client takes a skill's free trial before paying (the sign-in
// itself is loaded at first use; the trial's result marks and the listing's trial and tiers, +0.7 kB). 72.5 kB: a
// confirmed charge below the price spends only that much of the budget (72.0 kB with the three merged). 73 kB: the
// pipeline's memory of used-up free trials, a listing's `usageBased` and its price label, and the door to the receipt
// check's kept keys, loaded at first use (72.7 kB with them).
export const CONSUMER_BUDGET_BYTES = 73 * 1024;

interface Manifest {
  name: string;
  version: string;
  exports: Record<string, string | Record<string, string | Record<string, string>>>;
}

export const sdkManifest = (): Promise<Manifest> => Bun.file(join(SDK_DIR, 'package.json')).json() as Promise<Manifest>;

/** Import specifiers of every entry: `skill-market`, `skill-market/creator`, … */
export async function sdkSpecifiers(): Promise<string[]> {
  const { name, exports } = await sdkManifest();
  return Object.keys(exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? name : `${name}/${key.slice(2)}`));
}

/** Subpaths that run in a web page: everything but the creator (a server). */
export const BROWSER_SUBPATHS = ['.', './client', './x402', './registry', './wallet', './http', './json-schema'] as const;

/** The built file a bundler targeting browsers takes for a subpath (its `browser`, else `import` condition). */
export async function browserFile(subpath: string, packageDir = SDK_DIR): Promise<string> {
  const manifest = (await Bun.file(join(packageDir, 'package.json')).json()) as Manifest;
  const entry = manifest.exports[subpath];
  if (typeof entry !== 'object') throw new Error(`no export ${subpath}`);
  const browser = entry.browser;
  const file = typeof browser === 'object' ? browser.default : (browser ?? entry.import);
  if (typeof file !== 'string') throw new Error(`no built file for ${subpath}`);
  return join(packageDir, file);
}

export interface Packed {
  /** Absolute path of the .tgz. */
  file: string;
  /** Bytes of the .tgz, as published. */
  size: number;
  unpackedSize: number;
  files: string[];
}

/** Modification times (ms) of the files under `dir` that `keep` accepts (paths relative to `dir`). */
async function mtimes(dir: string, keep: (path: string) => boolean): Promise<number[]> {
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  const files = names.filter((name) => keep(name));
  return Promise.all(files.map(async (name) => (await stat(join(dir, name))).mtimeMs));
}

/**
 * Whether sdk/dist was built after every input of the build last changed (the SDK's sources,
 * manifest and build settings, and the declarations script): then `npm run build` (as CI runs it
 * before the tests) already made what a pack would build again.
 */
export async function sdkBuildIsFresh(): Promise<boolean> {
  const built = await mtimes(join(SDK_DIR, 'dist'), (name) => /\.(js|d\.ts)$/.test(name));
  if (built.length === 0) return false;
  const sources = await mtimes(
    SDK_DIR,
    (name) => !/^(dist|node_modules)(\/|$)/.test(name) && /(\.ts|package\.json|tsconfig\.build\.json)$/.test(name),
  );
  const script = (await stat(join(SDK_DIR, '..', 'scripts/sdk-declarations.ts'))).mtimeMs;
  return Math.max(script, ...sources) < Math.min(...built);
}

/** `npm pack` of the SDK into `destination` (its prepack script builds sdk/dist first). */
export async function packSdk(destination: string, options: { build?: boolean } = {}): Promise<Packed> {
  const args = ['npm', 'pack', '--json', '--pack-destination', destination, ...(options.build === false ? ['--ignore-scripts'] : [])];
  const child = Bun.spawn(args, { cwd: SDK_DIR, stdout: 'pipe', stderr: 'pipe' });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  if (code !== 0) throw new Error(`npm pack exited ${code}: ${stderr}`);
  // The prepack build prints to stdout before the JSON report.
  const [report] = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  if (!report) throw new Error(`npm pack printed no report: ${stdout}`);
  return {
    file: join(destination, report.filename),
    size: report.size,
    unpackedSize: report.unpackedSize,
    files: report.files.map((f) => f.path),
  };
}

const BUILTINS = new RegExp(`^(node:.*|${builtinModules.map((m) => m.replace(/[/]/g, '\\/')).join('|')})(\\/.*)?$`);

export interface BrowserBundle {
  /** What a page loads with the import: the entry and the chunks it imports statically. */
  bytes: number;
  gzipBytes: number;
  /** Chunks loaded later, by a dynamic import (e.g. the JSON Schema checker, at the first input check). */
  lazyBytes: number;
  lazyGzipBytes: number;
  /** Node built-in modules the code imports (none may be, for a page). */
  builtins: string[];
}

const STATIC_IMPORT = /(?:\bfrom\s*|\bimport\s*)["'](\.\/[^"']+)["']/g;

/**
 * Bundles `file` for browsers as a page's bundler would (minified, split, viem left out: a page
 * that pays has its own), measures what loads with the import and what loads later, and records
 * every Node built-in reached (Bun would otherwise put in browser stand-ins silently).
 */
export async function bundleForBrowser(file: string): Promise<BrowserBundle> {
  const builtins = new Set<string>();
  const result = await Bun.build({
    entrypoints: [file],
    target: 'browser',
    format: 'esm',
    minify: true,
    splitting: true,
    external: ['viem', 'viem/*'],
    plugins: [
      {
        name: 'node-builtins',
        setup(build) {
          build.onResolve({ filter: BUILTINS }, (args) => {
            builtins.add(args.path);
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  if (!result.success) throw new AggregateError(result.logs, `bundling ${file} failed`);
  const chunks = new Map<string, string>();
  for (const output of result.outputs) chunks.set(output.path.replace(/^.*\//, './'), await output.text());
  const entry = result.outputs.find((output) => output.kind === 'entry-point');
  if (!entry) throw new Error(`bundling ${file} made no entry`);
  const initial = new Set<string>();
  const visit = (name: string): void => {
    if (initial.has(name)) return;
    initial.add(name);
    for (const [, next] of (chunks.get(name) ?? '').matchAll(STATIC_IMPORT)) if (next && chunks.has(next)) visit(next);
  };
  visit(entry.path.replace(/^.*\//, './'));
  const measure = (names: string[]) => {
    const code = new TextEncoder().encode(names.map((name) => chunks.get(name)).join('\n'));
    return { bytes: code.length, gzipBytes: names.length === 0 ? 0 : gzipSync(code, { level: 9 }).length };
  };
  const now = measure([...initial]);
  const later = measure([...chunks.keys()].filter((name) => !initial.has(name)));
  return { ...now, lazyBytes: later.bytes, lazyGzipBytes: later.gzipBytes, builtins: [...builtins].sort() };
}

export const kB = (bytes: number): string => `${(bytes / 1024).toFixed(1)} kB`;
