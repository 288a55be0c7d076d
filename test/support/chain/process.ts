/**
 * Runs the anvil binary from `@foundry-rs/anvil`'s platform package on a free loopback port and
 * makes sure it never outlives us. Uses node:child_process so it works under Bun and Node alike.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export type AnvilProcess = {
  /** Pid of the anvil process itself (not of the watchdog shell). */
  readonly pid: number;
  readonly port: number;
  /** Kills anvil and resolves once it is gone; idempotent. */
  stop(): Promise<void>;
};

/**
 * On POSIX anvil runs under a tiny `sh` watchdog that holds the read end of a pipe from us: when
 * we exit for any reason (even SIGKILL, where no exit hook runs) the pipe closes, `read` returns,
 * and the shell kills and reaps anvil. `wait` also means anvil's pid is gone once the shell exits.
 * The shell ignores INT and HUP so that a Ctrl-C to the whole process group cannot take it down
 * before it has cleaned up.
 */
const WATCHDOG = 'trap "" INT HUP; "$0" "$@" </dev/null & pid=$!; echo "anvil-pid $pid"; read -r _; kill "$pid" 2>/dev/null; wait "$pid"';

const live = new Set<() => void>();
let exitHookInstalled = false;

/** Resolves the anvil binary shipped in `@foundry-rs/anvil-<platform>-<arch>`. */
export function anvilBinary(): string {
  const arch = ({ x64: "amd64", arm64: "arm64" } as Record<string, string>)[process.arch] ?? process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const bin = process.platform === "win32" ? "anvil.exe" : "anvil";
  const here = createRequire(import.meta.url);
  // The platform package is an optional dependency of @foundry-rs/anvil; it is usually hoisted,
  // but look next to @foundry-rs/anvil as well in case it is nested under it.
  const resolvers = [here];
  try {
    resolvers.push(createRequire(here.resolve("@foundry-rs/anvil/package.json")));
  } catch {
    // @foundry-rs/anvil itself missing: the error below says what to install.
  }
  for (const resolver of resolvers) {
    try {
      return join(dirname(resolver.resolve(`${pkg}/package.json`)), "bin", bin);
    } catch {
      // try the next location
    }
  }
  throw new Error(`anvil binary not found: install ${pkg} (an optional dependency of @foundry-rs/anvil)`);
}

/** Starts anvil with `args` (no --host/--port: those are set here) and waits for its port. */
export function spawnAnvil(args: readonly string[], timeoutMs = 10_000): Promise<AnvilProcess> {
  const binary = anvilBinary();
  const fullArgs = ["--host", "127.0.0.1", "--port", "0", ...args];
  const watched = process.platform !== "win32";
  const child = watched
    ? spawn("/bin/sh", ["-c", WATCHDOG, binary, ...fullArgs], { stdio: ["pipe", "pipe", "pipe"] })
    : spawn(binary, fullArgs, { stdio: ["ignore", "pipe", "pipe"] });

  return new Promise<AnvilProcess>((resolve, reject) => {
    let output = "";
    let anvilPid = watched ? undefined : child.pid;
    let settled = false;
    // At exit only anvil is killed: the watchdog shell survives us long enough to reap it.
    const hardKill = () => (watched && anvilPid !== undefined ? signal(anvilPid, "SIGKILL") : child.kill("SIGKILL"));
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
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("error", (error) => fail(error.message));
    child.on("exit", (code, signalName) => {
      // The watchdog killed from outside while anvil runs (bun test reaps a timed-out test's
      // child processes, this shell among them): take anvil along instead of orphaning it.
      if (settled && watched && anvilPid !== undefined && live.has(hardKill)) signal(anvilPid, "SIGKILL");
      live.delete(hardKill);
      fail(`exited with ${signalName ?? `code ${code}`}`);
    });
  });
}

function stopChild(child: ChildProcess, anvilPid: number | undefined, hardKill: () => void): Promise<void> {
  live.delete(hardKill);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.ref(); // whoever awaits stop() must not see the event loop end first
    child.once("exit", () => resolve());
    // SIGTERM lets anvil shut down cleanly (it is fast); escalate if it hangs.
    if (anvilPid !== undefined) signal(anvilPid, "SIGTERM");
    child.stdin?.end();
    if (anvilPid === undefined || child.stdin === null) child.kill("SIGTERM");
    const escalate = setTimeout(() => {
      if (anvilPid !== undefined) signal(anvilPid, "SIGKILL");
      child.kill("SIGKILL");
    }, 3_000);
    child.once("exit", () => clearTimeout(escalate));
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
  process.on("exit", () => {
    for (const kill of live) kill();
    live.clear();
  });
}
