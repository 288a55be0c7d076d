/**
 * The dev skill server: `market serve <module>` as a child process (in its own process group, so a
 * Ctrl-C reaches only us and we stop it in order), restarted when the module file changes. A
 * change that does not load is reported and the running server kept; a server that dies on its
 * own is fatal (onExit), except while it is being replaced.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { selfArgv } from './self';

export interface SkillServerOptions {
  /** Absolute path of the skills module. */
  module: string;
  /** Arguments after `market serve <module>`, asked at each (re)start (after prepare). */
  args(): string[];
  env: Record<string, string>;
  /** Its base URL, for /health. */
  url: string;
  /** Run before each (re)start: loads the module and prepares the registry; throws when it does not load. */
  prepare(): Promise<void>;
  /** Waits until the server's skills are listed. */
  registered(): Promise<void>;
  log(line: string): void;
  onExit(reason: string): void;
}

export interface SkillServer {
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 15_000;

export async function startSkillServer(options: SkillServerOptions): Promise<SkillServer> {
  let child: ChildProcess | undefined;
  let stopping = false;
  let reloading: Promise<void> = Promise.resolve();

  const launch = async (): Promise<void> => {
    await options.prepare();
    const [command, ...prefix] = selfArgv();
    const proc = spawn(command!, [...prefix, 'serve', options.module, ...options.args()], {
      // The server's stdin is a pipe from us: if we die without stopping it (SIGKILL, a crash) it
      // reads end-of-file and stops itself instead of holding the port for ever.
      env: { ...options.env, MARKET_SERVE_STOP_WITH_STDIN: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      const text = chunk.toString();
      output = (output + text).slice(-4000);
      for (const line of text.split('\n')) if (line.trim()) options.log(`[skills] ${line}`);
    };
    proc.stdout?.on('data', collect);
    proc.stderr?.on('data', collect);
    const exited = new Promise<string>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
    child = proc;
    void exited.then((reason) => {
      if (child === proc && !stopping) options.onExit(`the skill server exited (${reason})`);
    });
    try {
      await Promise.race([
        waitForHealth(options.url),
        exited.then((reason) => Promise.reject(new Error(`it exited (${reason}) while starting:\n${output.trim()}`))),
      ]);
      await Promise.race([
        options.registered(),
        exited.then((reason) => Promise.reject(new Error(`it exited (${reason}) while registering:\n${output.trim()}`))),
      ]);
    } catch (error) {
      if (child === proc) child = undefined;
      kill(proc, 'SIGKILL');
      throw error;
    }
  };

  await launch();

  let timer: ReturnType<typeof setTimeout> | undefined;
  const watcher: FSWatcher = watch(dirname(options.module), (_event, name) => {
    // Editors often save by writing a new file and renaming it: watch the folder, match the name.
    if (name !== null && name !== basename(options.module)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      reloading = reloading.then(reload);
    }, 150);
  });

  const reload = async () => {
    if (stopping) return;
    options.log(`skills module changed: reloading ${basename(options.module)}`);
    const previous = child;
    child = undefined; // its exit is expected now
    if (previous) await terminate(previous);
    try {
      await launch();
      options.log('skills reloaded');
    } catch (error) {
      options.log(`the skills did not reload: ${(error as Error).message}\nfix the module and save it again`);
    }
  };

  return {
    get pid() {
      return child?.pid;
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      watcher.close();
      if (child) await terminate(child);
    },
  };
}

async function waitForHealth(url: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  throw new Error(`no answer from ${url}/health within ${START_TIMEOUT_MS / 1000} s`);
}

/** SIGTERM to the server's process group; SIGKILL after 1.5 s (our whole stop must fit in 2 s). */
function terminate(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => kill(proc, 'SIGKILL'), 1_500);
    proc.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    kill(proc, 'SIGTERM');
  });
}

function kill(proc: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (proc.pid !== undefined) process.kill(-proc.pid, signal);
  } catch {
    proc.kill(signal);
  }
}
