/**
 * The compiled binary `dist/market`, as shipped: built by `npm run build` when it is missing or
 * older than the sources (CI builds it before the tests, so there it is only checked), and run as
 * child processes (registry, facilitator, `market serve`) whose output is kept for failures.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitForJson, inheritedEnv } from './process';
import { TEST_CACHE_HOME } from './cache';

const ROOT = join(import.meta.dir, '../..');
export const BINARY = join(ROOT, 'dist/market');

/** What goes into the binary: a change to any of these makes it stale. */
const SOURCES = ['src', 'sdk', 'package.json', 'package-lock.json', 'tsconfig.json'];
/** Written by `npm run build` itself (after the binary) or installed: not sources of the binary. */
const NOT_SOURCES = new Set([join(ROOT, 'sdk/dist'), join(ROOT, 'sdk/node_modules')]);

function newestSource(): number {
  let newest = 0;
  const visit = (path: string) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat || NOT_SOURCES.has(path)) return;
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const source of SOURCES) visit(join(ROOT, source));
  return newest;
}

/** Builds dist/market with `npm run build` unless it is newer than every source; answers how long the build took (0: none). */
export async function ensureBinary(): Promise<{ path: string; buildMs: number }> {
  const built = statSync(BINARY, { throwIfNoEntry: false });
  if (built && built.mtimeMs >= newestSource()) return { path: BINARY, buildMs: 0 };
  const started = performance.now();
  const build = Bun.spawn(['npm', 'run', 'build'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  const [code, out, err] = await Promise.all([build.exited, new Response(build.stdout).text(), new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`npm run build failed (exit ${code}):\n${out}\n${err}`);
  return { path: BINARY, buildMs: performance.now() - started };
}

export interface BinaryProcess {
  child: ReturnType<typeof Bun.spawn>;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs `dist/market <args>` from the repository root with only `env` (plus PATH and HOME) and,
 * when `health` is given, waits until that URL answers 2xx; a process that exits first fails with its output.
 */
export async function startBinary(args: string[], env: Record<string, string>, health?: string): Promise<BinaryProcess> {
  const child = Bun.spawn([BINARY, ...args], {
    cwd: ROOT,
    env: { ...inheritedEnv(), HOME: process.env.HOME ?? '/tmp', XDG_CACHE_HOME: TEST_CACHE_HOME, LOG_LEVEL: 'warn', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const chunks: string[] = [];
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) chunks.push(decoder.decode(chunk, { stream: true }));
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]).catch(() => undefined);
  const running: BinaryProcess = {
    child,
    output: () => chunks.join(''),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await child.exited;
      await drained;
    },
  };
  if (health) {
    const exited = child.exited.then(async (code) => {
      await drained;
      throw new Error(`market ${args[0]} exited (${code}) before answering ${health}:\n${running.output()}`);
    });
    await Promise.race([waitForJson(health, 30_000), exited]);
    exited.catch(() => undefined);
  }
  return running;
}
