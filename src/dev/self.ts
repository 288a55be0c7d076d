/**
 * How this program runs itself: the compiled `market` binary is its own executable; from source it
 * is Bun with src/cli/main.ts. Used to start `market serve` as a child and to print a `market call`
 * command that works as printed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';

const MAIN = resolve(import.meta.dir, '../cli/main.ts');

/** True inside `bun build --compile` output, whose modules live in a virtual file system. */
const isCompiled = import.meta.url.includes('$bunfs') || import.meta.dir.includes('~BUN');

/** argv prefix that runs `market` (append the command and its arguments). */
export function selfArgv(): string[] {
  return isCompiled ? [process.execPath] : [process.execPath, MAIN];
}

/** How a person types `market` in `cwd`: `npx market` in this repository, else the binary's path. */
export function selfCommand(cwd = process.cwd()): string {
  if (!isCompiled) {
    if (isThisRepository(cwd)) return 'npx market';
    return `${shellQuote(process.execPath)} ${shellQuote(displayPath(MAIN, cwd))}`;
  }
  if (Bun.which('market') === process.execPath) return 'market';
  return shellQuote(displayPath(process.execPath, cwd, true));
}

function isThisRepository(cwd: string): boolean {
  const manifest = join(cwd, 'package.json');
  if (!existsSync(manifest)) return false;
  try {
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: Record<string, string> };
    return resolve(cwd, pkg.bin?.market ?? '') === MAIN;
  } catch {
    return false;
  }
}

/** `path` relative to `cwd` when it lies inside it (`./x` for a command), else absolute. */
export function displayPath(path: string, cwd = process.cwd(), command = false): string {
  const rel = relative(cwd, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return path;
  return command && !rel.includes('/') ? `./${rel}` : rel;
}

/** Quotes for a POSIX shell when needed. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
