import { spawn, type ChildProcess } from 'node:child_process';
export { freePort } from '../../test/support/process';

/**
 * Starts a server process and resolves once `healthUrl` answers 200, with the time it took. Its
 * log lines at level error or worse are shown (a claim the facilitator refuses, say), the rest dropped.
 */
export async function startProcess(
  command: string[],
  env: Record<string, string>,
  healthUrl: string,
  cwd?: string,
): Promise<{ child: ChildProcess; startupMs: number; stop(): Promise<void> }> {
  const began = performance.now();
  const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'], cwd });
  showErrors(child, command[1] ?? command[0]!);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited ${child.exitCode} before answering`);
    try {
      if ((await fetch(healthUrl)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - began > 60_000) throw new Error(`${healthUrl} did not answer in 60 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const startupMs = performance.now() - began;
  return {
    child,
    startupMs,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Passes on the JSON log lines of `child` whose level is error or fatal, prefixed by `name`. */
function showErrors(child: ChildProcess, name: string) {
  let rest = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (/"level":"(error|fatal)"/.test(line)) console.error(`[${name}] ${line}`);
  });
}
