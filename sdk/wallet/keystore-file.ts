import { chmod, mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KeystoreV3 } from './keystore';

/**
 * Writes a keystore to `path` with mode 0600 (its folder, when made, 0700). An existing file is
 * never replaced: losing a key file can mean losing the funds it controls.
 *
 * @throws an `EEXIST` error when `path` exists
 */
export async function writeKeystoreFile(path: string, keystore: KeystoreV3): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(keystore, null, 2)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  // The mode given to open() is narrowed by the umask, never widened; say it outright anyway.
  await chmod(path, 0o600);
}

/** Reads a keystore file as JSON (it is validated when decrypted). */
export async function readKeystoreFile(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SyntaxError(`${path} is not a JSON keystore file`);
  }
}
