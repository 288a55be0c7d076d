/**
 * The EIP-712 digest of a receipt (receipt.ts: ours and the `offer-receipt` extension's), computed
 * directly: the type hash once per type, the domain separator once per domain, string fields
 * hashed once per value, and the struct as its words. viem's generic `hashTypedData` validates
 * the types and derives the type hash on every call, which costs more than the signature; this is
 * on the path of every paid answer and every receipt check. It refuses what `hashTypedData`
 * refuses (an address that is not one or has a wrong mixed-case checksum, an integer outside
 * uint256, a bytes32 of another size) and gives its digest otherwise: test/x402/receipt-digest.test.ts
 * checks this against viem on many random receipts.
 */
import { bytesToHex, domainSeparator, type Hex, hexToBytes, isAddress, keccak256 } from 'viem';

/** A field of a flat struct, of the types receipts use. */
type Field = { readonly name: string; readonly type: string };

const encoder = new TextEncoder();
const keccak = (bytes: Uint8Array) => keccak256(bytes, 'bytes');
const UINT256_LIMIT = 1n << 256n;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const typeHashes = new WeakMap<readonly Field[], Uint8Array>();
const separators = new Map<string, Uint8Array>();
/** keccak of string values: a skill's URL, name, network and scheme, a buyer's address repeat. Dropped all at once when full. */
const stringHashes = new Map<string, Uint8Array>();

function stringHash(value: string): Uint8Array {
  let hash = stringHashes.get(value);
  if (!hash) {
    if (stringHashes.size >= 4096) stringHashes.clear();
    hash = keccak(encoder.encode(value));
    stringHashes.set(value, hash);
  }
  return hash;
}

/** The 32-byte word of one field's value, or a throw where viem's hashTypedData throws. */
function word({ name, type }: Field, value: unknown): Uint8Array {
  if (type === 'string') {
    if (typeof value !== 'string') throw new TypeError(`receipt ${name} is not a string`);
    return stringHash(value);
  }
  if (type === 'uint256') {
    const n = BigInt(value as bigint | number | string);
    if (n < 0n || n >= UINT256_LIMIT) throw new RangeError(`receipt ${name} ${n} is not a uint256`);
    return hexToBytes(`0x${n.toString(16).padStart(64, '0')}`);
  }
  if (type === 'address' && typeof value === 'string' && isAddress(value)) return hexToBytes(`0x${value.slice(2).padStart(64, '0')}`);
  if (type === 'bytes32' && typeof value === 'string' && BYTES32.test(value)) return hexToBytes(value as Hex);
  throw new TypeError(`receipt ${name} is not a ${type}`);
}

/**
 * The EIP-712 digest of `message` as the struct `Receipt` of `fields` in the domain `name`
 * (version 1) on `chainId`: what `hashTypedData` gives.
 *
 * @example receiptDigest('skill-market receipt', 8453, RECEIPT_FIELDS, payload) // 0x… (32 bytes)
 * @throws when a field is out of its type (a payer that is not an address, an amount above uint256)
 * @internal
 */
export function receiptDigest(name: string, chainId: number, fields: readonly Field[], message: object): Hex {
  let typeHash = typeHashes.get(fields);
  if (!typeHash) {
    typeHash = keccak(encoder.encode(`Receipt(${fields.map((f) => `${f.type} ${f.name}`).join(',')})`));
    typeHashes.set(fields, typeHash);
  }
  const domain = `${chainId}:${name}`;
  let separator = separators.get(domain);
  if (!separator) {
    separator = hexToBytes(domainSeparator({ domain: { name, version: '1', chainId } }));
    separators.set(domain, separator);
  }
  const struct = new Uint8Array(32 * (fields.length + 1));
  struct.set(typeHash, 0);
  for (const [i, field] of fields.entries()) struct.set(word(field, (message as Record<string, unknown>)[field.name]), 32 * (i + 1));
  const data = new Uint8Array(66);
  data.set([0x19, 0x01], 0);
  data.set(separator, 2);
  data.set(keccak(struct), 34);
  return bytesToHex(keccak(data));
}
