/**
 * The voucher digest and its signer, computed directly: a voucher's EIP-712 struct is two words,
 * so its digest is one keccak over the cached domain separator and those words, and its signer is
 * recovered with @noble/curves (the curve library viem itself uses) without going through viem's
 * generic typed-data encoder. Both are on the path of every channel call, on both sides.
 */
import { invert, mod } from '@noble/curves/abstract/modular';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { type Address, domainSeparator, type Hex } from 'viem';
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

const { ProjectivePoint: Point, CURVE } = secp256k1;
type CurvePoint = InstanceType<typeof Point>;
/** Public keys of voucher signers already seen, with multiplication tables: a check is then a fraction of a recovery. */
const signerKeys = new Map<string, CurvePoint>();
const SIGNER_KEYS = 4096;

/** r, s and the recovery bit of a 65-byte r‖s‖v signature with low s (as the contract's ECDSA requires), or undefined. */
function parseSignature(signature: Hex): { r: bigint; s: bigint; bit: number } | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const v = Number.parseInt(signature.slice(130), 16);
  const bit = v >= 27 ? v - 27 : v;
  if (bit !== 0 && bit !== 1) return undefined;
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  if (r === 0n || r >= CURVE.n || s === 0n || s > CURVE.n >> 1n) return undefined;
  return { r, s, bit };
}

const addressOf = (point: CurvePoint) => `0x${bytesToHex(keccak_256(point.toRawBytes(false).subarray(1)).subarray(12))}`;

/**
 * Whether `signer` signed the voucher (channelId, maxClaimableAmount) on `chainId` with this
 * 65-byte signature, exactly as the contract's ecrecover would see it (r, s low, v). The first
 * voucher of a signer is checked by recovery; its public key is then kept with precomputed
 * multiples, and later vouchers are checked against it (the point u1·G + u2·Q must be R: same x,
 * the y parity v names).
 *
 * @example voucherSignedBy(channelId, 3000n, 8453, signature, config.payerAuthorizer) // true or false
 */
export function voucherSignedBy(channelId: Hex, maxClaimableAmount: bigint, chainId: number, signature: Hex, signer: Address): boolean {
  const parsed = parseSignature(signature);
  if (!parsed) return false;
  const digest = voucherDigestBytes(channelId, maxClaimableAmount, chainId);
  const key = signer.toLowerCase();
  const known = signerKeys.get(key);
  try {
    if (known) {
      const n = CURVE.n;
      const h = mod(BigInt(`0x${bytesToHex(digest)}`), n);
      const sInverse = invert(parsed.s, n);
      // multiply, not multiplyUnsafe: the latter ignores a point's own precomputed tables wrongly in this curve version.
      const point = Point.BASE.multiply(mod(h * sInverse, n)).add(known.multiply(mod(parsed.r * sInverse, n)));
      if (point.equals(Point.ZERO)) return false;
      const { x, y } = point.toAffine();
      return x === parsed.r && Number(y & 1n) === parsed.bit;
    }
    const recovered = new secp256k1.Signature(parsed.r, parsed.s).addRecoveryBit(parsed.bit).recoverPublicKey(digest);
    if (addressOf(recovered) !== key) return false;
    if (signerKeys.size >= SIGNER_KEYS) signerKeys.delete(signerKeys.keys().next().value!);
    signerKeys.set(key, secp256k1.utils.precompute(4, recovered));
    return true;
  } catch {
    return false;
  }
}
