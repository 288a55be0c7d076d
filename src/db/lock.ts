import { dlopen, FFIType } from 'bun:ffi';
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An exclusive lock on a data directory, held for the life of the process.
 *
 * PGlite does nothing to stop two processes from opening one data directory, and data is lost
 * when that happens. flock(2) is held by the kernel: it is released when the process dies, even
 * on SIGKILL, so there is no stale lock to clean up, and a second opener fails at once.
 */
export interface DirectoryLock {
  release(): void;
}

export class DataDirectoryLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: string | undefined,
  ) {
    super(
      `the embedded database in ${dataDir} is already in use by another process` +
        (holder ? ` (${holder})` : '') +
        '. Stop that process, set MARKET_DATA_DIR to another directory, or set DATABASE_URL to use PostgreSQL.',
    );
    this.name = 'DataDirectoryLockedError';
  }
}

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
export const LOCK_FILE = 'market.lock';

let libc: { flock: (fd: number, op: number) => number } | undefined;

function flock(fd: number, op: number): number {
  libc ??= dlopen(process.platform === 'darwin' ? 'libSystem.B.dylib' : 'libc.so.6', {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  }).symbols;
  return libc.flock(fd, op);
}

/** Takes the lock on `dataDir` (which must exist) or throws `DataDirectoryLockedError` at once. */
export function lockDataDirectory(dataDir: string): DirectoryLock {
  const path = join(dataDir, LOCK_FILE);
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
  if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    throw new DataDirectoryLockedError(dataDir, readHolder(path));
  }
  ftruncateSync(fd, 0);
  writeSync(fd, `pid ${process.pid} since ${new Date().toISOString()}\n`, 0);
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      flock(fd, LOCK_UN);
      closeSync(fd);
    },
  };
}

function readHolder(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
