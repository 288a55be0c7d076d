/**
 * The EIP-712 digests of the two receipts a paid answer carries (receipt.ts: our `skill-market
 * receipt` and the `offer-receipt` extension's `x402 receipt`), computed directly: the type hash
 * once, the domain separator once per chain, and each struct as its words. viem's generic
 * `hashTypedData` re-validates the types and re-derives the type hash on every call, which cost
 * more than the signature itself; these are on the path of every paid answer (the server signs
 * both) and every receipt check (the buyer's, the registry's). They refuse what `hashTypedData`
 * refuses (an address that is not one or whose mixed case is a wrong checksum, an integer outside
 * uint256, a bytes32 of another size), and give its digest otherwise: test/x402/receipt-digest.test.ts
 * checks both against viem on many random receipts.
 */
import { bytesToHex, domainSeparator, type Hex, hexToBytes, isAddress, keccak256 } from 'viem';
import { parseCaip2 } from './networks';

/**
 * One field of an EIP-712 struct: its name, the Solidity type it is encoded as, and whether its
 * value repeats from answer to answer (a skill's URL, name, network, scheme; a buyer's address),
 * so that its keccak is worth keeping.
 */
interface Field {
  name: string;
  type: 'uint256' | 'string' | 'address' | 'bytes32';
  repeats?: true;
}

/** Our receipt's struct (receipt.ts `SkillReceiptPayload`), in its signed order. */
export const SKILL_RECEIPT_FIELDS = [
  { name: 'version', type: 'uint256' },
  { name: 'resourceUrl', type: 'string', repeats: true },
  { name: 'skill', type: 'string', repeats: true },
  { name: 'network', type: 'string', repeats: true },
  { name: 'scheme', type: 'string', repeats: true },
  { name: 'payer', type: 'address' },
  { name: 'amount', type: 'uint256' },
  { name: 'transaction', type: 'string' },
  { name: 'cumulativeAmount', type: 'uint256' },
  { name: 'issuedAt', type: 'uint256' },
  { name: 'bodyDigest', type: 'bytes32' },
] as const satisfies readonly Field[];

/** The `offer-receipt` extension's receipt struct (its §5.3), in its signed order. */
export const OFFER_RECEIPT_FIELDS = [
  { name: 'version', type: 'uint256' },
  { name: 'network', type: 'string', repeats: true },
  { name: 'resourceUrl', type: 'string', repeats: true },
  { name: 'payer', type: 'string', repeats: true },
  { name: 'issuedAt', type: 'uint256' },
  { name: 'transaction', type: 'string' },
] as const satisfies readonly Field[];

/** Our receipt's EIP-712 domain name. */
export const SKILL_RECEIPT_DOMAIN = 'skill-market receipt';
/** The extension's receipt domain name; its chain is 1, as `@x402/extensions` signs and verifies it. */
export const OFFER_RECEIPT_DOMAIN = 'x402 receipt';
export const OFFER_RECEIPT_CHAIN_ID = 1;

const encoder = new TextEncoder();
const keccak = (bytes: Uint8Array) => keccak256(bytes, 'bytes');
const typeHashOf = (fields: readonly Field[]) => keccak(encoder.encode(`Receipt(${fields.map((f) => `${f.type} ${f.name}`).join(',')})`));
const SKILL_RECEIPT_TYPEHASH = typeHashOf(SKILL_RECEIPT_FIELDS);
const OFFER_RECEIPT_TYPEHASH = typeHashOf(OFFER_RECEIPT_FIELDS);
const UINT256_LIMIT = 1n << 256n;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/** The keccak of repeating string values, dropped all at once when full (a bound, not a policy). */
const stringHashes = new Map<string, Uint8Array>();
const STRING_HASHES = 4096;

function stringHash(value: string, repeats: boolean): Uint8Array {
  if (!repeats) return keccak(encoder.encode(value));
  let hash = stringHashes.get(value);
  if (!hash) {
    if (stringHashes.size >= STRING_HASHES) stringHashes.clear();
    hash = keccak(encoder.encode(value));
    stringHashes.set(value, hash);
  }
  return hash;
}

/** Domain separators by domain name and chain: a server signs on one or two chains. */
const separators = new Map<string, Uint8Array>();

function separatorOf(name: string, chainId: number): Uint8Array {
  const key = `${chainId}:${name}`;
  let separator = separators.get(key);
  if (!separator) {
    separator = hexToBytes(domainSeparator({ domain: { name, version: '1', chainId } }));
    separators.set(key, separator);
  }
  return separator;
}

/** The 32-byte word of one field's value, or a throw where viem's hashTypedData throws. */
function word(field: Field, value: unknown): Uint8Array {
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') throw new TypeError(`receipt ${field.name} is not a string`);
      return stringHash(value, field.repeats === true);
    case 'uint256': {
      const n = BigInt(value as bigint | number | string);
      if (n < 0n || n >= UINT256_LIMIT) throw new RangeError(`receipt ${field.name} ${n} is not a uint256`);
      return hexToBytes(`0x${n.toString(16).padStart(64, '0')}`);
    }
    case 'address': {
      const address = String(value);
      if (!isAddress(address)) throw new TypeError(`receipt ${field.name} ${address} is not an address`);
      return hexToBytes(`0x${address.slice(2).padStart(64, '0')}`);
    }
    case 'bytes32': {
      const hex = String(value);
      if (!BYTES32.test(hex)) throw new TypeError(`receipt ${field.name} is not 32 bytes of hex`);
      return hexToBytes(hex as Hex);
    }
  }
}

/** keccak(0x1901 ‖ domain separator ‖ keccak(type hash ‖ words)). */
function digestOf(separator: Uint8Array, typeHash: Uint8Array, fields: readonly Field[], message: Record<string, unknown>): Hex {
  const struct = new Uint8Array(32 * (fields.length + 1));
  struct.set(typeHash, 0);
  for (const [i, field] of fields.entries()) struct.set(word(field, message[field.name]), 32 * (i + 1));
  const data = new Uint8Array(66);
  data[0] = 0x19;
  data[1] = 0x01;
  data.set(separator, 2);
  data.set(keccak(struct), 34);
  return bytesToHex(keccak(data));
}

/**
 * The digest our receipt's signature is over (domain `skill-market receipt` on the payload's
 * network's chain): what `hashTypedData` gives for it.
 *
 * @example skillReceiptDigest(signed.payload) === hashTypedData(typedData(signed.payload)) // true
 * @throws when a field is out of its type (a payer that is not an address, an amount above uint256)
 */
export function skillReceiptDigest(payload: { network: string }): Hex {
  const separator = separatorOf(SKILL_RECEIPT_DOMAIN, parseCaip2(payload.network));
  return digestOf(separator, SKILL_RECEIPT_TYPEHASH, SKILL_RECEIPT_FIELDS, payload as unknown as Record<string, unknown>);
}

/**
 * The digest the extension's receipt's signature is over (domain `x402 receipt`, chain 1).
 *
 * @example offerReceiptDigest(offered.payload) // what @x402/extensions' verifier recovers from
 */
export function offerReceiptDigest(payload: object): Hex {
  const separator = separatorOf(OFFER_RECEIPT_DOMAIN, OFFER_RECEIPT_CHAIN_ID);
  return digestOf(separator, OFFER_RECEIPT_TYPEHASH, OFFER_RECEIPT_FIELDS, payload as Record<string, unknown>);
}
