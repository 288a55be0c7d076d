/**
 * The arrows between the parts of the tree, checked by `npm run lint`: which folder may import which
 * (type-only imports included: a type is a dependency too), no import of the CLI from outside it, and
 * no circle between the registry's modules (src/registry/modules/<module>/), nor between the config
 * readers (src/config/*.ts). `bun scripts/check-boundaries.ts [root]` prints each violation and exits 1.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** A forbidden arrow: files under one of `from` (and not under `except`) import nothing under `to`. */
interface Boundary {
  from: readonly string[];
  except?: readonly string[];
  to: readonly string[];
  why: string;
}

export const BOUNDARIES: readonly Boundary[] = [
  { from: ['src/facilitator/'], to: ['src/registry/'], why: 'the facilitator stands beside the registry, never on it' },
  { from: ['src/registry/'], to: ['src/facilitator/'], why: 'the registry does not reach into the facilitator' },
  {
    from: ['src/net/'],
    to: ['src/registry/', 'src/facilitator/'],
    why: 'the guarded outbound HTTP (SSRF guard, live 402 reads) sits below the registry and the facilitator, which both use it',
  },
  {
    from: ['src/facilitator/'],
    except: ['src/facilitator/schemes/', 'src/facilitator/create.ts'],
    to: ['src/facilitator/schemes/'],
    why: 'the facilitator dispatches to its schemes without knowing them: only create.ts puts them together',
  },
  {
    from: ['src/facilitator/schemes/exact/'],
    to: ['src/facilitator/schemes/channel/'],
    why: 'each facilitator scheme stands alone: what two schemes share lives in src/facilitator/',
  },
  {
    from: ['src/facilitator/schemes/channel/'],
    to: ['src/facilitator/schemes/exact/'],
    why: 'each facilitator scheme stands alone: what two schemes share lives in src/facilitator/',
  },
  {
    from: ['sdk/x402/'],
    to: ['sdk/client/', 'sdk/creator/', 'sdk/payment/'],
    why: 'the x402 codec is the bottom of the SDK: it uses no client, creator or payment code',
  },
  { from: ['sdk/client/', 'sdk/payment/'], to: ['sdk/creator/'], why: 'the consumer side does not use the creator side' },
  { from: ['sdk/creator/'], to: ['sdk/client/', 'sdk/payment/'], why: 'the creator side does not use the consumer side' },
  { from: ['sdk/http/'], to: ['sdk/client/', 'sdk/payment/'], why: 'the HTTP kit sits below the consumer client and its payments' },
  { from: ['sdk/'], to: ['src/'], why: 'the SDK is published on its own: it cannot reach into the application' },
  {
    from: [''],
    except: ['src/cli/', 'test/cli/'],
    to: ['src/cli/'],
    why: 'the CLI is the top: what it shares with others lives in a neutral home (src/config, src/runtime, …)',
  },
];

/** Folders scanned (from the root); node_modules and build output are skipped. */
const SCANNED = ['src', 'sdk', 'test', 'bench', 'scripts', 'examples'];
const SKIPPED = new Set(['node_modules', 'dist', 'screenshots']);
const EXTENSIONS = ['.ts', '.tsx', '.mts'];

export interface Violation {
  file: string;
  imports: string;
  why: string;
}

function sourceFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (SKIPPED.has(name)) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (EXTENSIONS.some((ext) => name.endsWith(ext)) && !name.endsWith('.d.ts')) found.push(path);
    }
  };
  for (const top of SCANNED) if (existsSync(join(root, top))) walk(join(root, top));
  return found;
}

// Static imports and re-exports (also `import type`, spread over lines), side-effect imports and import().
const STATIC = /^\s*(?:import|export)\s+(?:type\s+)?[\w$*\s,]*(?:\{[^}]*\})?\s*from\s*['"]([^'"\n]+)['"]/gm;
const BARE = /^\s*import\s*['"]([^'"\n]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g;

/** The module specifiers a file names. */
export function specifiersOf(text: string): string[] {
  const out: string[] = [];
  for (const pattern of [STATIC, BARE, DYNAMIC]) for (const match of text.matchAll(pattern)) out.push(match[1]!);
  return out;
}

/** The file a specifier names (relative to the root), or undefined for a package outside the tree. */
function resolveSpecifier(root: string, file: string, specifier: string): string | undefined {
  let base: string;
  if (specifier.startsWith('.')) base = resolve(dirname(file), specifier);
  else if (specifier === 'skill-market') base = join(root, 'sdk');
  else if (specifier.startsWith('skill-market/')) base = join(root, 'sdk', specifier.slice('skill-market/'.length));
  else return undefined;
  const candidates = [base, ...EXTENSIONS.map((ext) => base + ext), ...EXTENSIONS.map((ext) => join(base, `index${ext}`))];
  const hit = candidates.find((path) => existsSync(path) && statSync(path).isFile());
  return relative(root, hit ?? base)
    .split('\\')
    .join('/');
}

const under = (path: string, folders: readonly string[]) => folders.some((folder) => path.startsWith(folder));

/** The folder of a registry module a file belongs to, if it does. */
function registryModuleOf(path: string): string | undefined {
  return /^src\/registry\/modules\/([^/]+)\//.exec(path)?.[1];
}

/** Circles in a graph: its strongly connected parts of more than one node (Tarjan). */
export function circlesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) === index.get(node)) {
      const part: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        part.push(member);
      } while (member !== node);
      if (part.length > 1) circles.push(part.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return circles;
}

const addEdge = (graph: Map<string, Set<string>>, from: string, to: string) => {
  if (!graph.has(from)) graph.set(from, new Set());
  graph.get(from)!.add(to);
};

/** Every violation in the tree at `root`. */
export function checkBoundaries(root: string): Violation[] {
  const violations: Violation[] = [];
  const modules = new Map<string, Set<string>>();
  const configFiles = new Map<string, Set<string>>();
  for (const path of sourceFiles(root)) {
    const file = relative(root, path).split('\\').join('/');
    for (const specifier of specifiersOf(readFileSync(path, 'utf8'))) {
      const target = resolveSpecifier(root, path, specifier);
      if (target === undefined) continue;
      for (const boundary of BOUNDARIES) {
        if (under(file, boundary.from) && !under(file, boundary.except ?? []) && under(target, boundary.to)) {
          violations.push({ file, imports: specifier, why: boundary.why });
        }
      }
      const [fromModule, toModule] = [registryModuleOf(file), registryModuleOf(target)];
      if (fromModule && toModule && fromModule !== toModule) addEdge(modules, fromModule, toModule);
      if (/^src\/config\/[^/]+$/.test(file) && /^src\/config\/[^/]+$/.test(target)) addEdge(configFiles, file, target);
    }
  }
  for (const circle of circlesOf(modules)) {
    violations.push({
      file: `src/registry/modules/{${circle.join(',')}}`,
      imports: circle.map((m) => `${m} → ${[...modules.get(m)!].filter((t) => circle.includes(t)).join(', ')}`).join('; '),
      why: 'registry modules import each other in a circle: move the shared piece to the module that owns it (see src/registry/README.md)',
    });
  }
  for (const circle of circlesOf(configFiles)) {
    violations.push({
      file: circle.join(', '),
      imports: 'each other',
      why: 'the config readers import each other in a circle: shared pieces live in a file both import',
    });
  }
  return violations;
}

if (import.meta.main) {
  const root = resolve(process.argv[2] ?? '.');
  const violations = checkBoundaries(root);
  for (const v of violations) console.error(`${v.file}: imports ${v.imports}: ${v.why}`);
  if (violations.length > 0) {
    console.error(`\n${violations.length} boundary violation(s)`);
    process.exit(1);
  }
  console.log('boundaries: no violation');
}
