/**
 * The voucher digest and its signer, computed directly: a voucher's EIP-712 struct is two words,
 * so its digest is one keccak over the cached domain separator and those words, and its signer is
 * recovered with @noble/curves (the curve library viem itself uses) without going through viem's
 * generic typed-data encoder. Both are on the path of every channel call, on both sides.
 */
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { type Address, domainSeparator, getAddress, type Hex } from 'viem';
import { batchSettlementDomain } from './batch-settlement';

const encoder = new TextEncoder();
const VOUCHER_TYPEHASH = keccak_256(encoder.encode('Voucher(bytes32 channelId,uint128 maxClaimableAmount)'));
const separators = new Map<number, Uint8Array>();

function separatorOf(chainId: number): Uint8Array {
  let separator = separators.get(chainId);
  if (!separator) {
    separator = hexToBytes(domainSeparator({ domain: batchSettlementDomain(chainId) }).slice(2));
    separators.set(chainId, separator);
  }
  return separator;
}

/** The 32-byte digest of the voucher (channelId, maxClaimableAmount) on `chainId`. */
export function voucherDigestBytes(channelId: Hex, maxClaimableAmount: bigint, chainId: number): Uint8Array {
  if (maxClaimableAmount < 0n || maxClaimableAmount >= 1n << 128n) throw new RangeError('maxClaimableAmount is not a uint128');
  const struct = new Uint8Array(96);
  struct.set(VOUCHER_TYPEHASH, 0);
  struct.set(hexToBytes(channelId.slice(2).padStart(64, '0')), 32);
  struct.set(hexToBytes(maxClaimableAmount.toString(16).padStart(64, '0')), 64);
  const message = new Uint8Array(66);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(separatorOf(chainId), 2);
  message.set(keccak_256(struct), 34);
  return keccak_256(message);
}

/**
 * The digest a voucher signs: unique per channel and cumulative amount.
 *
 * @example voucherDigest(channelId, 3000n, 8453) // what names a voucher payment in receipts
 */
export function voucherDigest(channelId: Hex, maxClaimableAmount: bigint, chainId: number): Hex {
  return `0x${bytesToHex(voucherDigestBytes(channelId, maxClaimableAmount, chainId))}`;
}

/**
 * The address that signed a voucher (65-byte r‖s‖v signature, low s as the contract's ECDSA
 * requires), or undefined when the signature is malformed.
 *
 * @example (await recoverVoucherSigner(channelId, 3000n, 8453, signature)) === payerAuthorizer
 */
export function recoverVoucherSigner(channelId: Hex, maxClaimableAmount: bigint, chainId: number, signature: Hex): Address | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const v = Number.parseInt(signature.slice(130), 16);
  const bit = v >= 27 ? v - 27 : v;
  if (bit !== 0 && bit !== 1) return undefined;
  try {
    const parsed = secp256k1.Signature.fromCompact(signature.slice(2, 130)).addRecoveryBit(bit);
    if (parsed.hasHighS()) return undefined;
    const point = parsed.recoverPublicKey(voucherDigestBytes(channelId, maxClaimableAmount, chainId));
    const hash = keccak_256(point.toRawBytes(false).subarray(1));
    return getAddress(`0x${bytesToHex(hash.subarray(12))}`);
  } catch {
    return undefined;
  }
}
