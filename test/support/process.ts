import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isFree, pickFreePort } from '../../src/dev/ports';
import { eventually } from './eventually';
import { TEST_CACHE_HOME } from './cache';

export const CLI_ENTRY = join(import.meta.dir, '../../src/cli/main.ts');

/**
 * Ports for the servers the tests start. Where the kernel's ephemeral range (the local ports of
 * outgoing connections, /proc/sys/net/ipv4/ip_local_port_range) leaves room below it, each test
 * worker hands out ports from a slice of its own there (by BUN_TEST_WORKER_ID): no connection takes
 * one between its choice and the server's bind, nor does the other worker. Each is checked free
 * before it is handed out, and none twice until the slice has gone round. Elsewhere, a port the
 * kernel gave a moment ago.
 */
const SLICE = 1500;
const FIRST_SLICE_PORT = 12_000;
const slice = (() => {
  let ephemeralFirst = 32_768;
  try {
    ephemeralFirst = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    // not Linux: its usual range
  }
  const worker = Number(process.env.BUN_TEST_WORKER_ID ?? 0) || 0;
  const start = FIRST_SLICE_PORT + (worker % 8) * SLICE;
  return start + SLICE <= ephemeralFirst ? { start, next: 0 } : undefined;
})();

/** Ports this process handed out: never twice, so ports asked for one after another differ. */
const handedOut = new Set<number>();

/** A port free on 127.0.0.1 a moment ago, not handed out before by this process (see above). */
export async function freePort(): Promise<number> {
  if (slice) {
    for (let attempt = 0; attempt < SLICE; attempt++) {
      const port = slice.start + (slice.next++ % SLICE);
      if (slice.next % SLICE === 0) handedOut.clear(); // round again: the first ones are long closed
      if (handedOut.has(port) || !(await isFree(port))) continue;
      handedOut.add(port);
      return port;
    }
    throw new Error(`no free port in ${slice.start}-${slice.start + SLICE - 1}`);
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await pickFreePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port that was not handed out before');
}

/**
 * What every process a test starts takes from the test run's environment, whatever else the test
 * controls: PATH, and the run's temporary folder and allocator setting (scripts/test.ts).
 */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const name of ['TMPDIR', 'MIMALLOC_PURGE_DELAY']) {
    const value = process.env[name];
    if (value) env[name] = value;
  }
  return env;
}

/** Runs `market <args>` from source under this Bun, with a controlled environment. */
export function spawnMarket(args: string[], env: Record<string, string>, cwd?: string) {
  return Bun.spawn([process.execPath, CLI_ENTRY, ...args], {
    cwd,
    env: {
      ...inheritedEnv(),
      HOME: process.env.HOME ?? '/tmp',
      LOG_LEVEL: 'warn',
      XDG_CACHE_HOME: TEST_CACHE_HOME,
      MARKET_RPC_URL: 'http://127.0.0.1:9',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
}

/** Polls `url` until it answers 2xx; returns the parsed JSON body. */
export async function waitForJson(url: string, timeoutMs = 60_000): Promise<unknown> {
  const answered = async () => {
    try {
      const res = await fetch(url);
      return res.ok ? { body: (await res.json()) as unknown } : undefined;
    } catch {
      return undefined; // not listening yet
    }
  };
  return (await eventually(answered, (answer) => answer !== undefined, `${url} answers 2xx`, timeoutMs))!.body;
}

/** A running `market` child whose stdout and stderr are drained as they come (a chatty process never blocks). */
export interface MarketProcess {
  child: ReturnType<typeof spawnMarket>;
  /** Everything it wrote so far. */
  output(): string;
  /** The exit code, once it exited and its output was read. */
  exited: Promise<number>;
}

/** {@link spawnMarket}, drained; kill it with `child.kill()`. */
export function startMarket(args: string[], env: Record<string, string>, cwd?: string): MarketProcess {
  const child = spawnMarket(args, env, cwd);
  const chunks: string[] = [];
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) chunks.push(decoder.decode(chunk, { stream: true }));
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]).catch(() => undefined);
  return {
    child,
    output: () => chunks.join(''),
    exited: child.exited.then(async (code) => {
      await drained;
      return code;
    }),
  };
}
