/**
 * The dev data directory (default ./.market/dev): everything `market dev` keeps between starts.
 *
 *   market.lock      held while a `market dev` runs on it (a second one is refused)
 *   chain/state.json the local chain (anvil --state: loaded at start, dumped every few seconds and at exit)
 *   db/              the embedded database of the registry and the facilitator
 *   dev.json         secrets made on first start: session secret, keystore passphrase, API keys (0600)
 *   demo-wallet.json the demo consumer wallet's keystore (test only)
 *   profile.json     what every command's `--dev <dir>` reads: URLs, token, keys, the demo wallet (0600)
 *   served.json      the names of the skills the dev skill server served last (taken off the listing when gone)
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataDirectoryLockedError, LOCK_FILE, lockDataDirectory, type DirectoryLock } from '../db/lock';
import { DevError } from './errors';

export const DEFAULT_DEV_DIR = '.market/dev';

export interface DevPaths {
  root: string;
  chainState: string;
  database: string;
  secrets: string;
  keystore: string;
  profile: string;
  served: string;
}

export function devPaths(dir: string, cwd = process.cwd()): DevPaths {
  const root = resolve(cwd, dir);
  return {
    root,
    chainState: join(root, 'chain', 'state.json'),
    database: join(root, 'db'),
    secrets: join(root, 'dev.json'),
    keystore: join(root, 'demo-wallet.json'),
    profile: join(root, 'profile.json'),
    served: join(root, 'served.json'),
  };
}

/**
 * Creates and locks the directory; with `fresh`, empties it first (under the lock, so a running
 * instance is never wiped). A second `market dev` on the same directory fails here.
 */
export function claimDataDir(paths: DevPaths, fresh: boolean): DirectoryLock {
  mkdirSync(paths.root, { recursive: true });
  let lock: DirectoryLock;
  try {
    lock = lockDataDirectory(paths.root);
  } catch (error) {
    if (!(error instanceof DataDirectoryLockedError)) throw error;
    throw new DevError(
      `market dev is already running on ${paths.root}${error.holder ? ` (${error.holder})` : ''}: stop it first, or pass --dir <another directory>`,
    );
  }
  if (fresh) {
    for (const entry of readdirSync(paths.root)) if (entry !== LOCK_FILE) rmSync(join(paths.root, entry), { recursive: true, force: true });
  }
  mkdirSync(join(paths.root, 'chain'), { recursive: true });
  return lock;
}

/** Secrets made on first start and kept, so sessions, keys and the wallet survive restarts. */
export interface DevSecrets {
  jwtSecret: string;
  /** Passphrase of the demo wallet's keystore (a test-only wallet: kept next to it on purpose). */
  passphrase: string;
  creatorKey?: string;
  consumerKey?: string;
}

export function readSecrets(paths: DevPaths): DevSecrets {
  if (existsSync(paths.secrets)) {
    const parsed = JSON.parse(readFileSync(paths.secrets, 'utf8')) as Partial<DevSecrets>;
    if (typeof parsed.jwtSecret === 'string' && typeof parsed.passphrase === 'string') return parsed as DevSecrets;
  }
  const secrets = { jwtSecret: randomBytes(32).toString('hex'), passphrase: randomBytes(16).toString('hex') };
  writePrivateJson(paths.secrets, secrets);
  return secrets;
}

/** Writes JSON readable by the owner only, atomically (a crash never leaves half a file). */
export function writePrivateJson(path: string, value: unknown): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}
