/**
 * `--dev [dir]` on every command that talks to a marketplace: the directory of a `market dev`
 * (its profile.json says where everything is). The directory is optional: `--dev=D`, or `--dev D`
 * when D is an existing directory or a path that names no file (`.market/dev`, not `./skill.ts`);
 * a bare `--dev` means MARKET_DEV_DIR, else .market/dev.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { readDevDir, type Env } from '../config';
import { DEFAULT_DEV_DIR } from '../dev/data-dir';

/** The arguments with every `--dev` given its directory, so the commands parse it as `--dev=<dir>`. */
export function withDevDir(args: readonly string[], env: Env, cwd = process.cwd()): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (arg !== '--dev') {
      out.push(arg);
      continue;
    }
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith('-') && namesDirectory(resolve(cwd, next), next)) {
      out.push(`--dev=${next}`);
      i++;
    } else out.push(`--dev=${readDevDir(env) ?? DEFAULT_DEV_DIR}`);
  }
  return out;
}

function namesDirectory(path: string, given: string): boolean {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat) return stat.isDirectory();
  return given.includes('/') && !/\.(ts|js|mjs|cjs|mts|json)$/.test(given);
}
