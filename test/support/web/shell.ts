/**
 * A real POSIX shell for snippets people paste: `runInShell(script)` runs it with `sh -c` in a
 * fresh directory where `curl` and `market` are stand-ins that only record their arguments, and
 * tells whether anything else ran (a `.pwned` file appeared).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ShellRun {
  /** The arguments of each call of `curl` or `market`, in order. */
  args: string[][];
  /** Whether the script made `.pwned` or `pwned`: a command it was not meant to run. */
  pwned: boolean;
  /** The shell's exit code and what it said on stderr (a smuggled command that fails shows here). */
  exitCode: number;
  stderr: string;
}

export function runInShell(script: string): ShellRun {
  const dir = mkdtempSync(join(tmpdir(), 'snippet-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const name of ['curl', 'market']) {
    // Each argument ends in NUL and each call in \x01, so a newline inside an argument is kept.
    writeFileSync(
      join(bin, name),
      `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a" >> "${dir}/args"; done\nprintf '\\001' >> "${dir}/args"\n`,
    );
    chmodSync(join(bin, name), 0o755);
  }
  try {
    const run = Bun.spawnSync(['sh', '-c', script], { cwd: dir, env: { PATH: `${bin}:/usr/bin:/bin`, IFS: ' ' } });
    const recorded = existsSync(join(dir, 'args')) ? readFileSync(join(dir, 'args'), 'utf8') : '';
    const args = recorded
      .split('\x01')
      .filter((call) => call !== '')
      .map((call) => call.split('\0').slice(0, -1));
    const pwned = existsSync(join(dir, '.pwned')) || existsSync(join(dir, 'pwned'));
    return { args, pwned, exitCode: run.exitCode, stderr: run.stderr.toString() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
