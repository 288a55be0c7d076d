/**
 * scrypt (RFC 7914) for keystores, on every runtime: the runtime's native scrypt where it has one
 * (Node and Bun, reached through `process.getBuiltinModule` so that browsers never see a `node:`
 * import) and @noble/hashes otherwise. OpenSSL and BoringSSL refuse the parameter sets that break
 * RFC 7914's `N < 2^(16·r)` (the Web3 Secret Storage definition's own test vector uses n = 2^18
 * with r = 1); those go to @noble/hashes too.
 */
import { scryptAsync } from '@noble/hashes/scrypt';

export interface ScryptParams {
  n: number;
  r: number;
  p: number;
  dklen: number;
}

/** Largest work accepted from a keystore file, so a hostile file cannot exhaust memory or time. */
const SCRYPT_LIMITS = { maxN: 2 ** 20, maxMemoryBytes: 1024 * 1024 * 1024, maxP: 16, maxR: 32 } as const;

export function checkScryptParams({ n, r, p, dklen }: ScryptParams): string | undefined {
  if (!Number.isSafeInteger(n) || n < 2 || (n & (n - 1)) !== 0 || n > SCRYPT_LIMITS.maxN)
    return `n must be a power of two from 2 to ${SCRYPT_LIMITS.maxN}`;
  if (!Number.isSafeInteger(r) || r < 1 || r > SCRYPT_LIMITS.maxR) return `r must be 1 to ${SCRYPT_LIMITS.maxR}`;
  if (!Number.isSafeInteger(p) || p < 1 || p > SCRYPT_LIMITS.maxP) return `p must be 1 to ${SCRYPT_LIMITS.maxP}`;
  if (128 * n * r > SCRYPT_LIMITS.maxMemoryBytes) return 'n·r needs too much memory';
  if (dklen !== 32) return 'dklen must be 32';
  return undefined;
}

type NativeScrypt = (
  password: Uint8Array,
  salt: Uint8Array,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
  done: (error: Error | null, key: Uint8Array) => void,
) => void;

/** node:crypto's scrypt when the runtime has one (about twice as fast as JavaScript). */
function nativeScrypt(): NativeScrypt | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => { scrypt?: NativeScrypt } | undefined } }).process;
  return runtime?.getBuiltinModule?.('node:crypto')?.scrypt;
}

/** Derives `dklen` bytes from `password` and `salt`. */
export async function scrypt(password: Uint8Array, salt: Uint8Array, params: ScryptParams): Promise<Uint8Array> {
  const { n, r, p, dklen } = params;
  const native = nativeScrypt();
  const opensslAccepts = !(16 * r < 53 && n >= 2 ** (16 * r));
  if (native && opensslAccepts) {
    return new Promise((resolve, reject) =>
      native(password, salt, dklen, { N: n, r, p, maxmem: 256 * n * r + 32 * 1024 * 1024 }, (error, key) =>
        error ? reject(error) : resolve(new Uint8Array(key)),
      ),
    );
  }
  return scryptAsync(password, salt, { N: n, r, p, dkLen: dklen, maxmem: 256 * n * r + 32 * 1024 * 1024 });
}
