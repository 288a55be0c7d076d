/** Wire-format patterns shared by the schemas, the terms builder and the network table. */
import type { Address, Hex } from 'viem';

export type { Address, Hex };

/** 0x + 40 hex digits, any case (checksums are not required on the wire). */
export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;
/** 0x + an even, non-zero number of hex digits. */
export const HEX_BYTES_PATTERN = /^0x(?:[0-9a-fA-F]{2})+$/;
/** 0x + 64 hex digits (bytes32). */
export const BYTES32_PATTERN = /^0x[0-9a-fA-F]{64}$/;
/** A non-negative integer as a canonical decimal string (no sign, no leading zeros), up to 78 digits. */
export const UINT_PATTERN = /^(?:0|[1-9][0-9]{0,77})$/;
/** A transaction hash, or "" when nothing was sent. */
export const TX_HASH_PATTERN = /^(?:0x[0-9a-fA-F]{64})?$/;

/** Largest uint256. */
export const MAX_UINT256 = 2n ** 256n - 1n;

/** True when `value` is a canonical decimal string that fits in a uint256. */
export function isUint256String(value: unknown): value is string {
  return typeof value === 'string' && UINT_PATTERN.test(value) && BigInt(value) <= MAX_UINT256;
}

/** Case-insensitive address equality. */
export function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
