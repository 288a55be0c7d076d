/**
 * Runs anvil (the local chain of `market dev` and of the tests) on a loopback port and makes sure
 * it never outlives us. Uses node:child_process so it works under Bun and Node alike.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';

export type AnvilProcess = {
  /** Pid of the anvil process itself (not of the watchdog shell). */
  readonly pid: number;
  readonly port: number;
  /** Kills anvil and resolves once it is gone; idempotent. */
  stop(): Promise<void>;
};

/**
 * On POSIX anvil runs under a tiny `sh` watchdog. A reader subshell holds the read end of a pipe
 * from us (on fd 3, as a background job's stdin is /dev/null): when we exit for any reason (even
 * SIGKILL, where no exit hook runs) the pipe closes, `read` returns and anvil is killed (SIGTERM:
 * it dumps its --state). The shell itself waits for anvil, so it exits when anvil does, for
 * whatever reason, and takes the reader along; anvil's pid is gone once the shell has exited.
 * The shell ignores INT and HUP so that a Ctrl-C to the whole process group cannot take it down
 * before it has cleaned up.
 */
const WATCHDOG =
  'trap "" INT HUP; exec 3<&0; "$0" "$@" </dev/null & pid=$!; echo "anvil-pid $pid"; ' +
  '(read -r _ <&3; kill "$pid" 2>/dev/null) & reader=$!; exec 3<&-; ' +
  'wait "$pid"; code=$?; kill "$reader" 2>/dev/null; exit $code';

const live = new Set<() => void>();
let exitHookInstalled = false;

/** Raised when no anvil binary is found; its message says how to get one. */
export class AnvilNotFoundError extends Error {
  override readonly name = 'AnvilNotFoundError';
}

/**
 * The anvil binary: next to our own executable (a copied `market` binary), in the platform package
 * `@foundry-rs/anvil-<platform>-<arch>` resolved from this module or from `cwd`, else on PATH.
 */
export function anvilBinary(cwd = process.cwd(), env: Record<string, string | undefined> = process.env): string {
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch] ?? process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const bin = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const beside = join(dirname(process.execPath), bin);
  if (!/(^|[\\/])(bun|node)(\.exe)?$/.test(process.execPath) && existsSync(beside)) return beside;
  // Inside a compiled binary import.meta.url is virtual: resolving from it fails, cwd still works.
  const resolvers = [createRequire(import.meta.url), createRequire(join(cwd, 'package.json'))];
  for (const resolver of [...resolvers]) {
    try {
      // The platform package is an optional dependency of @foundry-rs/anvil; usually hoisted, but
      // it may sit under it.
      resolvers.push(createRequire(resolver.resolve('@foundry-rs/anvil/package.json')));
    } catch {
      // not installed that way
    }
  }
  for (const resolver of resolvers) {
    try {
      const path = join(dirname(resolver.resolve(`${pkg}/package.json`)), 'bin', bin);
      if (existsSync(path)) return path;
    } catch {
      // try the next location
    }
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const path = join(dir, bin);
    if (existsSync(path)) return path;
  }
  throw new AnvilNotFoundError(
    `anvil (the local chain) was not found: run \`npm install ${pkg}\`, or put the anvil binary on PATH or next to this program (https://getfoundry.sh)`,
  );
}

export type SpawnAnvilOptions = {
  /** Loopback port; 0 (default) picks a free one. */
  port?: number;
  /** Start-up limit in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Called once if anvil exits after it started (not when stop() ended it). */
  onExit?: (reason: string) => void;
};

/** Starts anvil with `args` (no --host/--port: those are set here) and waits for its port. */
export function spawnAnvil(args: readonly string[], options: SpawnAnvilOptions = {}): Promise<AnvilProcess> {
  const { port: wantedPort = 0, timeoutMs = 10_000, onExit } = options;
  const binary = anvilBinary();
  const fullArgs = ['--host', '127.0.0.1', '--port', String(wantedPort), ...args];
  const watched = process.platform !== 'win32';
  const child = watched
    ? spawn('/bin/sh', ['-c', WATCHDOG, binary, ...fullArgs], { stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(binary, fullArgs, { stdio: ['ignore', 'pipe', 'pipe'] });

  return new Promise<AnvilProcess>((resolve, reject) => {
    let output = '';
    let anvilPid = watched ? undefined : child.pid;
    let settled = false;
    // At exit only anvil is killed: the watchdog shell survives us long enough to reap it.
    const hardKill = () => (watched && anvilPid !== undefined ? signal(anvilPid, 'SIGKILL') : child.kill('SIGKILL'));
    live.add(hardKill);
    installExitHook();

    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stopChild(child, anvilPid, hardKill);
      reject(new Error(`anvil did not start: ${reason}\n${output.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail(`no listening port after ${timeoutMs} ms`), timeoutMs);

    const onData = (chunk: Buffer) => {
      if (settled) return; // after start-up the data is only drained, so anvil never blocks on a full pipe
      output += chunk.toString();
      anvilPid ??= Number(/anvil-pid (\d+)/.exec(output)?.[1]) || undefined;
      const port = Number(/Listening on 127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
      if (!port || anvilPid === undefined) return;
      settled = true;
      clearTimeout(timer);
      // Never keep the host process alive just for anvil; the exit hook and watchdog clean up.
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) unrefStream(stream);
      let stopping: Promise<void> | undefined;
      const pid = anvilPid;
      resolve({ pid, port, stop: () => (stopping ??= stopChild(child, pid, hardKill)) });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('error', (error) => fail(error.message));
    child.on('exit', (code, signalName) => {
      // The watchdog killed from outside while anvil runs (bun test reaps a timed-out test's
      // child processes, this shell among them): take anvil along instead of orphaning it.
      const unexpected = settled && live.has(hardKill);
      if (unexpected && watched && anvilPid !== undefined) signal(anvilPid, 'SIGKILL');
      live.delete(hardKill);
      if (unexpected) onExit?.(signalName ?? `code ${code}`);
      fail(`exited with ${signalName ?? `code ${code}`}`);
    });
  });
}

function stopChild(child: ChildProcess, anvilPid: number | undefined, hardKill: () => void): Promise<void> {
  live.delete(hardKill);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.ref(); // whoever awaits stop() must not see the event loop end first
    child.once('exit', () => resolve());
    // SIGTERM lets anvil shut down cleanly (it is fast); escalate if it hangs.
    if (anvilPid !== undefined) signal(anvilPid, 'SIGTERM');
    child.stdin?.end();
    if (anvilPid === undefined || child.stdin === null) child.kill('SIGTERM');
    const escalate = setTimeout(() => {
      if (anvilPid !== undefined) signal(anvilPid, 'SIGKILL');
      child.kill('SIGKILL');
    }, 3_000);
    child.once('exit', () => clearTimeout(escalate));
  });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

function unrefStream(stream: unknown): void {
  (stream as { unref?: () => void } | null)?.unref?.();
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // "exit" handlers must be synchronous: signals are sent, nothing is awaited.
  process.on('exit', () => {
    for (const kill of live) kill();
    live.clear();
  });
}
