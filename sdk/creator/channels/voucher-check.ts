/**
 * The skill server's check of a voucher's signature, computed directly with @noble/curves (the
 * curve library viem itself uses): the first voucher of a signer is recovered, later ones are
 * checked against its kept public key. On the path of every channel call; server side only, so
 * pages paying over channels do not carry the curve arithmetic.
 */
import { invert, mod } from '@noble/curves/abstract/modular';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex } from '@noble/hashes/utils';
import type { Address, Hex } from 'viem';
import { voucherDigestBytes } from '../../x402/voucher-signature';

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
