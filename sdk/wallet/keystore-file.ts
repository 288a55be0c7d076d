import type * as FsPromises from 'node:fs/promises';
import type * as NodePath from 'node:path';
import type { KeystoreV3 } from './keystore';

/**
 * node:fs/promises, reached through `process.getBuiltinModule` (Node 20.16+, Bun) so that the
 * consumer entry stays free of `node:` imports and bundles for a web page; there, keystore files
 * are not available and this says so.
 */
function fs(): typeof FsPromises {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const module = runtime?.getBuiltinModule?.('node:fs/promises') as typeof FsPromises | undefined;
  if (!module) throw new Error('Keystore files need Node 20.16+ or Bun (no file system here): use encryptKeystore/decryptKeystore');
  return module;
}

/** node:path's dirname, reached the same way. */
function folderOf(path: string): string {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const module = runtime?.getBuiltinModule?.('node:path') as typeof NodePath | undefined;
  if (!module) throw new Error('Keystore files need Node 20.16+ or Bun (no file system here)');
  return module.dirname(path);
}

/**
 * Writes a keystore to `path` with mode 0600 (its folder, when made, 0700). An existing file is
 * never replaced: losing a key file can mean losing the funds it controls.
 *
 * @throws an `EEXIST` error when `path` exists
 *
 * @example
 * import { encryptKeystore, writeKeystoreFile } from 'skill-market/wallet';
 * import { generatePrivateKey } from 'viem/accounts';
 *
 * await writeKeystoreFile('./wallets/agent.json', await encryptKeystore(generatePrivateKey(), passphrase)); // mode 0600
 */
export async function writeKeystoreFile(path: string, keystore: KeystoreV3): Promise<void> {
  const { chmod, mkdir, open } = fs();
  await mkdir(folderOf(path), { recursive: true, mode: 0o700 });
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

/**
 * Reads a keystore file as JSON (it is validated when decrypted).
 *
 * @example
 * const privateKey = await decryptKeystore(await readKeystoreFile('./wallets/agent.json'), passphrase);
 */
export async function readKeystoreFile(path: string): Promise<unknown> {
  const text = await fs().readFile(path, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SyntaxError(`${path} is not a JSON keystore file`);
  }
}
