/**
 * scrypt (RFC 7914) for keystores. node:crypto does the work; OpenSSL and BoringSSL refuse the
 * parameter sets that break RFC 7914's `N < 2^(16·r)` (the Web3 Secret Storage definition's own
 * test vector uses n = 2^18 with r = 1), so those fall back to the plain implementation below.
 */
import { pbkdf2Sync, scrypt as nodeScrypt } from 'node:crypto';

export interface ScryptParams {
  n: number;
  r: number;
  p: number;
  dklen: number;
}

/** Largest work accepted from a keystore file, so a hostile file cannot exhaust memory or time. */
export const SCRYPT_LIMITS = { maxN: 2 ** 20, maxMemoryBytes: 1024 * 1024 * 1024, maxP: 16, maxR: 32 } as const;

export function checkScryptParams({ n, r, p, dklen }: ScryptParams): string | undefined {
  if (!Number.isSafeInteger(n) || n < 2 || (n & (n - 1)) !== 0 || n > SCRYPT_LIMITS.maxN) return `n must be a power of two from 2 to ${SCRYPT_LIMITS.maxN}`;
  if (!Number.isSafeInteger(r) || r < 1 || r > SCRYPT_LIMITS.maxR) return `r must be 1 to ${SCRYPT_LIMITS.maxR}`;
  if (!Number.isSafeInteger(p) || p < 1 || p > SCRYPT_LIMITS.maxP) return `p must be 1 to ${SCRYPT_LIMITS.maxP}`;
  if (128 * n * r > SCRYPT_LIMITS.maxMemoryBytes) return 'n·r needs too much memory';
  if (dklen !== 32) return 'dklen must be 32';
  return undefined;
}

/** Derives `dklen` bytes from `password` and `salt`. */
export async function scrypt(password: Uint8Array, salt: Uint8Array, params: ScryptParams): Promise<Uint8Array> {
  const { n, r, p, dklen } = params;
  if (16 * r < 53 && n >= 2 ** (16 * r)) return scryptPlain(password, salt, params);
  return new Promise((resolve, reject) =>
    nodeScrypt(password, salt, dklen, { N: n, r, p, maxmem: 256 * n * r + 32 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(new Uint8Array(key)))),
  );
}

/** RFC 7914 in plain JavaScript: slower than OpenSSL, used only where OpenSSL refuses. */
export function scryptPlain(password: Uint8Array, salt: Uint8Array, { n, r, p, dklen }: ScryptParams): Uint8Array {
  const blockWords = 32 * r;
  const b = toWords(pbkdf2Sync(password, salt, 1, p * 128 * r, 'sha256'));
  const v = new Uint32Array(blockWords * n);
  const x = new Uint32Array(blockWords);
  const y = new Uint32Array(blockWords);
  for (let i = 0; i < p; i++) {
    const block = b.subarray(i * blockWords, (i + 1) * blockWords);
    x.set(block);
    for (let k = 0; k < n; k++) {
      v.set(x, k * blockWords);
      blockMix(x, y, r);
    }
    for (let k = 0; k < n; k++) {
      const j = x[(2 * r - 1) * 16]! & (n - 1);
      for (let w = 0; w < blockWords; w++) x[w]! ^= v[j * blockWords + w]!;
      blockMix(x, y, r);
    }
    block.set(x);
  }
  return new Uint8Array(pbkdf2Sync(password, fromWords(b), 1, dklen, 'sha256'));
}

function blockMix(b: Uint32Array, y: Uint32Array, r: number): void {
  const t = b.slice((2 * r - 1) * 16, 2 * r * 16);
  for (let i = 0; i < 2 * r; i++) {
    for (let w = 0; w < 16; w++) t[w]! ^= b[i * 16 + w]!;
    salsa208(t);
    // Even blocks go to the first half, odd ones to the second.
    y.set(t, ((i & 1) * r + (i >> 1)) * 16);
  }
  b.set(y);
}

const rotl = (a: number, s: number) => (a << s) | (a >>> (32 - s));

// Salsa20/8 on 16 words in place; locals rather than array slots keep it fast enough.
function salsa208(b: Uint32Array): void {
  let x0 = b[0]!, x1 = b[1]!, x2 = b[2]!, x3 = b[3]!, x4 = b[4]!, x5 = b[5]!, x6 = b[6]!, x7 = b[7]!;
  let x8 = b[8]!, x9 = b[9]!, x10 = b[10]!, x11 = b[11]!, x12 = b[12]!, x13 = b[13]!, x14 = b[14]!, x15 = b[15]!;
  for (let i = 0; i < 8; i += 2) {
    x4 ^= rotl(x0 + x12, 7); x8 ^= rotl(x4 + x0, 9); x12 ^= rotl(x8 + x4, 13); x0 ^= rotl(x12 + x8, 18);
    x9 ^= rotl(x5 + x1, 7); x13 ^= rotl(x9 + x5, 9); x1 ^= rotl(x13 + x9, 13); x5 ^= rotl(x1 + x13, 18);
    x14 ^= rotl(x10 + x6, 7); x2 ^= rotl(x14 + x10, 9); x6 ^= rotl(x2 + x14, 13); x10 ^= rotl(x6 + x2, 18);
    x3 ^= rotl(x15 + x11, 7); x7 ^= rotl(x3 + x15, 9); x11 ^= rotl(x7 + x3, 13); x15 ^= rotl(x11 + x7, 18);
    x1 ^= rotl(x0 + x3, 7); x2 ^= rotl(x1 + x0, 9); x3 ^= rotl(x2 + x1, 13); x0 ^= rotl(x3 + x2, 18);
    x6 ^= rotl(x5 + x4, 7); x7 ^= rotl(x6 + x5, 9); x4 ^= rotl(x7 + x6, 13); x5 ^= rotl(x4 + x7, 18);
    x11 ^= rotl(x10 + x9, 7); x8 ^= rotl(x11 + x10, 9); x9 ^= rotl(x8 + x11, 13); x10 ^= rotl(x9 + x8, 18);
    x12 ^= rotl(x15 + x14, 7); x13 ^= rotl(x12 + x15, 9); x14 ^= rotl(x13 + x12, 13); x15 ^= rotl(x14 + x13, 18);
  }
  b[0]! += x0; b[1]! += x1; b[2]! += x2; b[3]! += x3; b[4]! += x4; b[5]! += x5; b[6]! += x6; b[7]! += x7;
  b[8]! += x8; b[9]! += x9; b[10]! += x10; b[11]! += x11; b[12]! += x12; b[13]! += x13; b[14]! += x14; b[15]! += x15;
}

function toWords(bytes: Uint8Array): Uint32Array {
  const words = new Uint32Array(bytes.length / 4);
  for (let i = 0; i < words.length; i++) words[i] = bytes[4 * i]! | (bytes[4 * i + 1]! << 8) | (bytes[4 * i + 2]! << 16) | (bytes[4 * i + 3]! << 24);
  return words;
}

function fromWords(words: Uint32Array): Uint8Array {
  const bytes = new Uint8Array(words.length * 4);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    bytes.set([w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24], 4 * i);
  }
  return bytes;
}
