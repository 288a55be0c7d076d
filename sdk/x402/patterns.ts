/** Wire-format patterns shared by the schemas, the terms builder and the network table. */
import { type Address as ViemAddress, type Hex as ViemHex, getAddress, isAddress } from 'viem';

/** A 0x-prefixed address as viem types it (`0x${string}`); payment addresses are checksummed where the SDK returns them. */
export type Address = ViemAddress;
/** 0x-prefixed hex data as viem types it (`0x${string}`): signatures, nonces, transaction hashes. */
export type Hex = ViemHex;

/**
 * 0x + 40 hex digits, any case (checksums are not required on the wire).
 *
 * @example ADDRESS_PATTERN.test(payTo); // true for '0x209693bc6afc0c5328ba36faf03c514ef312287c'
 */
export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;
/** 0x + an even, non-zero number of hex digits. */
export const HEX_BYTES_PATTERN = /^0x(?:[0-9a-fA-F]{2})+$/;
/**
 * 0x + 64 hex digits (bytes32): nonces, transaction hashes.
 *
 * @example BYTES32_PATTERN.test(authorization.nonce); // true
 */
export const BYTES32_PATTERN = /^0x[0-9a-fA-F]{64}$/;
/** A non-negative integer as a canonical decimal string (no sign, no leading zeros), up to 78 digits. */
export const UINT_PATTERN = /^(?:0|[1-9][0-9]{0,77})$/;
/** A transaction hash, or "" when nothing was sent. */
export const TX_HASH_PATTERN = /^(?:0x[0-9a-fA-F]{64})?$/;

/**
 * Largest uint256.
 *
 * @example
 * BigInt(authorization.value) <= MAX_UINT256; // true for every valid uint256 string
 */
export const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * True when `value` is a canonical decimal string that fits in a uint256.
 *
 * @example
 * isUint256String('1000'); // true
 * isUint256String('-1'); // false; so are '01', '1e3' and 2^256
 */
export function isUint256String(value: unknown): value is string {
  return typeof value === 'string' && UINT_PATTERN.test(value) && BigInt(value) <= MAX_UINT256;
}

/**
 * Case-insensitive address equality.
 *
 * @example
 * sameAddress(payment.authorization.to, '0x209693bc6afc0c5328ba36faf03c514ef312287c'); // checksum or not
 */
export function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/**
 * The checksummed address, or undefined when not an address or mixed-case with a bad EIP-55 checksum.
 *
 * @example
 * checksumAddress('0x209693bc6afc0c5328ba36faf03c514ef312287c'); // '0x209693Bc6afc0C5328bA36FaF03C514EF312287C'
 */
export function checksumAddress(value: string): Address | undefined {
  if (!ADDRESS_PATTERN.test(value)) return undefined;
  const digits = value.slice(2);
  if (digits !== digits.toUpperCase() && !isAddress(value, { strict: true })) return undefined;
  return getAddress(value.toLowerCase());
}
