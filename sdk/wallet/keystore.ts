/**
 * Web3 Secret Storage v3 keystores (the JSON geth, MetaMask, ethers, Foundry and viem-based tools
 * import): the key encrypted with aes-128-ctr under a passphrase-derived key, authenticated by
 * keccak256(derivedKey[16..32] ‖ ciphertext). Written with scrypt; read with scrypt or pbkdf2.
 * Web Crypto and viem only, so the same code runs on Node, Bun and in a browser page.
 */
import { bytesToHex, concat, hexToBytes, keccak256, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type { KeystoreErrorCode } from '../http/error-codes';
import { MarketError } from '../http/errors';
import { checkScryptParams, scrypt } from './scrypt';

/** A v3 keystore as stored on disk. */
export interface KeystoreV3 {
  version: 3;
  id: string;
  /** Lower-case hex address without 0x, as geth writes it. */
  address?: string;
  crypto: {
    cipher: 'aes-128-ctr';
    cipherparams: { iv: string };
    ciphertext: string;
    kdf: 'scrypt' | 'pbkdf2';
    kdfparams: ScryptKdfParams | Pbkdf2KdfParams;
    mac: string;
  };
}
/** `kdfparams` of a scrypt keystore (the kind {@link encryptKeystore} writes): cost `n`, `r`, `p` and the hex salt. */
export interface ScryptKdfParams {
  dklen: number;
  n: number;
  r: number;
  p: number;
  salt: string;
}
/** `kdfparams` of a pbkdf2-hmac-sha256 keystore (read, never written): iterations `c` and the hex salt. */
export interface Pbkdf2KdfParams {
  dklen: number;
  c: number;
  prf: 'hmac-sha256';
  salt: string;
}

/**
 * The `code` of a {@link KeystoreError}: `invalid_keystore` (not a v3 keystore),
 * `unsupported_keystore` (a cipher, kdf or cost this reader does not take), `wrong_passphrase`
 * (the MAC does not match) or `address_mismatch` (the file's address is not the key's).
 */
export type { KeystoreErrorCode } from '../http/error-codes';

/**
 * Why a keystore could not be written or opened. Never carries key material.
 *
 * @example
 * try {
 *   await loadSpendingWallet({ keystorePath: './wallet.json', passphrase });
 * } catch (error) {
 *   if (error instanceof KeystoreError && error.code === 'wrong_passphrase') console.error('Wrong passphrase, try again');
 *   else throw error;
 * }
 */
export class KeystoreError extends MarketError {
  override readonly name = 'KeystoreError';
  declare readonly code: KeystoreErrorCode;

  constructor(code: KeystoreErrorCode, message: string) {
    super(code, message);
  }
}

/**
 * scrypt cost written by default: geth's "standard" (2^18, r 8, p 1; about 256 MB and a second).
 *
 * @example
 * await encryptKeystore(key, passphrase); // scrypt n 2^18, r 8, p 1: DEFAULT_SCRYPT
 * await encryptKeystore(key, passphrase, { scrypt: { n: 2 ** 10 } }); // a fast, weak keystore for tests only
 */
export const DEFAULT_SCRYPT = { n: 2 ** 18, r: 8, p: 1 } as const;
/**
 * Shortest passphrase accepted for a new keystore (here, so a browser page can read it without node:fs).
 *
 * @example
 * if (passphrase.length < MIN_PASSPHRASE_LENGTH) form.error = `Use at least ${MIN_PASSPHRASE_LENGTH} characters`;
 */
export const MIN_PASSPHRASE_LENGTH = 8;
const MAX_PBKDF2_ITERATIONS = 10_000_000;
const HEX = /^[0-9a-fA-F]*$/;

/** Options of {@link encryptKeystore}. */
export interface EncryptOptions {
  /** scrypt cost; lower only for tests. Default {@link DEFAULT_SCRYPT}. */
  scrypt?: { n?: number; r?: number; p?: number };
}

/**
 * Encrypts a private key into a v3 keystore.
 *
 * @example const keystore = await encryptKeystore(generatePrivateKey(), 'correct horse battery staple');
 */
export async function encryptKeystore(privateKey: Hex, passphrase: string, options: EncryptOptions = {}): Promise<KeystoreV3> {
  const key = hexToBytes(privateKey);
  if (key.length !== 32) throw new KeystoreError('invalid_keystore', 'A private key is 32 bytes');
  const kdfparams: ScryptKdfParams = {
    dklen: 32,
    n: options.scrypt?.n ?? DEFAULT_SCRYPT.n,
    r: options.scrypt?.r ?? DEFAULT_SCRYPT.r,
    p: options.scrypt?.p ?? DEFAULT_SCRYPT.p,
    salt: bareHex(randomBytes(32)),
  };
  const problem = checkScryptParams(kdfparams);
  if (problem) throw new KeystoreError('unsupported_keystore', `Invalid scrypt parameters: ${problem}`);
  const derived = await scrypt(passphraseBytes(passphrase), hexToBytes(`0x${kdfparams.salt}`), kdfparams);
  const iv = randomBytes(16);
  const ciphertext = await aes128Ctr(derived.subarray(0, 16), iv, key);
  return {
    version: 3,
    id: globalThis.crypto.randomUUID(),
    address: privateKeyToAddress(privateKey).slice(2).toLowerCase(),
    crypto: {
      cipher: 'aes-128-ctr',
      cipherparams: { iv: bareHex(iv) },
      ciphertext: bareHex(ciphertext),
      kdf: 'scrypt',
      kdfparams,
      mac: mac(derived, ciphertext).slice(2),
    },
  };
}

/**
 * Opens a v3 keystore (scrypt or pbkdf2-hmac-sha256, aes-128-ctr) and returns the private key.
 *
 * @throws KeystoreError `wrong_passphrase` when the MAC does not match; `invalid_keystore` or
 *   `unsupported_keystore` for malformed or exotic files; `address_mismatch` when the file's
 *   address is not the key's.
 *
 * @example
 * import { decryptKeystore } from 'skill-market/wallet';
 * import { privateKeyToAccount } from 'viem/accounts';
 *
 * const keystore = JSON.parse(await file.text()); // e.g. a file the visitor picked in a web page
 * const account = privateKeyToAccount(await decryptKeystore(keystore, passphrase)); // KeystoreError 'wrong_passphrase' on a typo
 */
export async function decryptKeystore(keystore: unknown, passphrase: string): Promise<Hex> {
  const file = parseKeystore(keystore);
  const { crypto } = file;
  const derived = await deriveKey(crypto.kdf, crypto.kdfparams, passphraseBytes(passphrase));
  const ciphertext = hexToBytes(`0x${crypto.ciphertext}`);
  const expected = hexToBytes(`0x${crypto.mac}`);
  const actual = hexToBytes(mac(derived, ciphertext));
  if (expected.length !== 32 || !equalInConstantTime(expected, actual))
    throw new KeystoreError('wrong_passphrase', 'Wrong passphrase (the keystore MAC does not match)');
  const plain = await aes128Ctr(derived.subarray(0, 16), hexToBytes(`0x${crypto.cipherparams.iv}`), ciphertext);
  if (plain.length > 32) throw new KeystoreError('invalid_keystore', 'The keystore does not hold a secp256k1 private key');
  // Some tools stored keys with leading zero bytes dropped.
  const privateKey = bytesToHex(concat([new Uint8Array(32 - plain.length), plain]));
  plain.fill(0);
  if (
    file.address !== undefined &&
    privateKeyToAddress(privateKey).slice(2).toLowerCase() !== file.address.replace(/^0x/i, '').toLowerCase()
  ) {
    throw new KeystoreError('address_mismatch', 'The keystore’s address does not belong to its key');
  }
  return privateKey;
}

function mac(derived: Uint8Array, ciphertext: Uint8Array): Hex {
  return keccak256(concat([derived.subarray(16, 32), ciphertext]));
}

function randomBytes(length: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(length));
}

function bareHex(bytes: Uint8Array): string {
  return bytesToHex(bytes).slice(2);
}

/** AES-128-CTR with the whole 16-byte IV as a big-endian counter, as geth and node:crypto do. */
async function aes128Ctr(key: Uint8Array, iv: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const subtle = globalThis.crypto.subtle;
  const cryptoKey = await subtle.importKey('raw', key.slice(), { name: 'AES-CTR' }, false, ['encrypt']);
  return new Uint8Array(await subtle.encrypt({ name: 'AES-CTR', counter: iv.slice(), length: 128 }, cryptoKey, data.slice()));
}

function equalInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

function passphraseBytes(passphrase: string): Uint8Array {
  if (typeof passphrase !== 'string') throw new TypeError('The passphrase must be a string');
  return new TextEncoder().encode(passphrase);
}

async function deriveKey(kdf: string, params: ScryptKdfParams | Pbkdf2KdfParams, passphrase: Uint8Array): Promise<Uint8Array> {
  const salt = hexToBytes(`0x${params.salt}`);
  if (kdf === 'scrypt') {
    const p = params as ScryptKdfParams;
    const problem = checkScryptParams(p);
    if (problem) throw new KeystoreError('unsupported_keystore', `Unsupported scrypt parameters: ${problem}`);
    return scrypt(passphrase, salt, p);
  }
  const p = params as Pbkdf2KdfParams;
  if (p.prf !== 'hmac-sha256') throw new KeystoreError('unsupported_keystore', `Unsupported pbkdf2 prf: ${String(p.prf).slice(0, 32)}`);
  if (!Number.isSafeInteger(p.c) || p.c < 1 || p.c > MAX_PBKDF2_ITERATIONS)
    throw new KeystoreError('unsupported_keystore', 'Unsupported pbkdf2 iteration count');
  if (p.dklen !== 32) throw new KeystoreError('unsupported_keystore', 'Unsupported pbkdf2 dklen');
  const subtle = globalThis.crypto.subtle;
  const base = await subtle.importKey('raw', passphrase.slice(), 'PBKDF2', false, ['deriveBits']);
  return new Uint8Array(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: salt.slice(), iterations: p.c }, base, 256));
}

function parseKeystore(value: unknown): KeystoreV3 {
  const bad = (what: string): never => {
    throw new KeystoreError('invalid_keystore', `Not a v3 keystore: ${what}`);
  };
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      bad('not JSON');
    }
  }
  if (typeof value !== 'object' || value === null) bad('expected an object');
  // biome-ignore lint/suspicious/noExplicitAny: untrusted JSON, every field read below is checked before use
  const file = value as Record<string, any>;
  if (file.version !== 3) bad('version must be 3');
  // geth wrote "Crypto" in early versions.
  const crypto = file.crypto ?? file.Crypto;
  if (typeof crypto !== 'object' || crypto === null) bad('missing crypto');
  if (crypto.cipher !== 'aes-128-ctr')
    throw new KeystoreError('unsupported_keystore', `Unsupported cipher: ${String(crypto.cipher).slice(0, 32)}`);
  if (crypto.kdf !== 'scrypt' && crypto.kdf !== 'pbkdf2')
    throw new KeystoreError('unsupported_keystore', `Unsupported kdf: ${String(crypto.kdf).slice(0, 32)}`);
  const hex = (v: unknown, bytes?: number) =>
    typeof v === 'string' && HEX.test(v) && v.length % 2 === 0 && v.length > 0 && (bytes === undefined || v.length === bytes * 2);
  if (!hex(crypto.cipherparams?.iv, 16)) bad('cipherparams.iv must be 16 bytes of hex');
  if (!hex(crypto.ciphertext) || crypto.ciphertext.length > 128) bad('ciphertext must be hex');
  if (!hex(crypto.mac, 32)) bad('mac must be 32 bytes of hex');
  if (
    typeof crypto.kdfparams !== 'object' ||
    crypto.kdfparams === null ||
    !hex(crypto.kdfparams.salt) ||
    crypto.kdfparams.salt.length > 1024
  )
    bad('kdfparams.salt must be hex');
  if (file.address !== undefined && (typeof file.address !== 'string' || !/^(0x)?[0-9a-fA-F]{40}$/.test(file.address)))
    bad('address must be 40 hex digits');
  return { ...file, crypto } as KeystoreV3;
}
