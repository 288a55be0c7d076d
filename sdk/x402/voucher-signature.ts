/**
 * The voucher digest, computed directly: a voucher's EIP-712 struct is two words, so its digest is
 * one keccak over the cached domain separator and those words, without going through viem's
 * generic typed-data encoder. It is on the path of every channel call, on both sides (the skill
 * server's signature check is in creator/schemes/channel/voucher-check.ts).
 */
import { bytesToHex, domainSeparator, type Hex, hexToBytes, keccak256 } from 'viem';
import { batchSettlementDomain } from './batch-settlement';

const encoder = new TextEncoder();
const keccakBytes = (bytes: Uint8Array) => keccak256(bytes, 'bytes');
const VOUCHER_TYPEHASH = keccakBytes(encoder.encode('Voucher(bytes32 channelId,uint128 maxClaimableAmount)'));
const separators = new Map<number, Uint8Array>();

function separatorOf(chainId: number): Uint8Array {
  let separator = separators.get(chainId);
  if (!separator) {
    separator = hexToBytes(domainSeparator({ domain: batchSettlementDomain(chainId) }));
    separators.set(chainId, separator);
  }
  return separator;
}

/**
 * The 32-byte digest of the voucher (channelId, maxClaimableAmount) on `chainId`, as bytes.
 *
 * @example account.sign({ hash: bytesToHex(voucherDigestBytes(channelId, 3000n, 8453)) }) // a voucher's signature
 */
export function voucherDigestBytes(channelId: Hex, maxClaimableAmount: bigint, chainId: number): Uint8Array {
  if (maxClaimableAmount < 0n || maxClaimableAmount >= 1n << 128n) throw new RangeError('maxClaimableAmount is not a uint128');
  const struct = new Uint8Array(96);
  struct.set(VOUCHER_TYPEHASH, 0);
  struct.set(hexToBytes(`0x${channelId.slice(2).padStart(64, '0')}`), 32);
  struct.set(hexToBytes(`0x${maxClaimableAmount.toString(16).padStart(64, '0')}`), 64);
  const message = new Uint8Array(66);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(separatorOf(chainId), 2);
  message.set(keccakBytes(struct), 34);
  return keccakBytes(message);
}

/**
 * The digest a voucher signs: unique per channel and cumulative amount.
 *
 * @example voucherDigest(channelId, 3000n, 8453) // what names a voucher payment in receipts
 */
export function voucherDigest(channelId: Hex, maxClaimableAmount: bigint, chainId: number): Hex {
  return bytesToHex(voucherDigestBytes(channelId, maxClaimableAmount, chainId));
}
