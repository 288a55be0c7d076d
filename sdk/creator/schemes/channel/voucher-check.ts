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
import { voucherDigestBytes } from '../../../x402/voucher-signature';

const { ProjectivePoint: Point, CURVE } = secp256k1;
type CurvePoint = InstanceType<typeof Point>;

/**
 * Multiples of one point for multiplying it by public scalars: row i holds 1..2^(w-1) times
 * 2^(w·i)·P, so a product is one addition per non-zero signed window digit and no doubling. Not
 * constant time, so for checking signatures only (every scalar here is public), never for signing.
 */
interface Multiples {
  w: number;
  rows: CurvePoint[][];
}

function multiplesOf(point: CurvePoint, w: number): Multiples {
  const half = 1 << (w - 1);
  const rows: CurvePoint[][] = [];
  let base = point;
  // One row more than 256 / w: a signed digit may carry into it.
  for (let i = 0; i <= Math.ceil(256 / w); i++) {
    const row = [base];
    for (let j = 1; j < half; j++) row.push(row[j - 1]!.add(base));
    rows.push(row);
    base = row[half - 1]!.double();
  }
  // In affine form (z = 1) an addition's multiplications by z are nearly free: about half the time.
  const flat = Point.normalizeZ(rows.flat());
  return { w, rows: rows.map((_, i) => flat.slice(i * half, (i + 1) * half)) };
}

/** k·P for 0 ≤ k < n, from P's multiples (signed digits in -2^(w-1)+1..2^(w-1)). */
function times({ w, rows }: Multiples, scalar: bigint): CurvePoint {
  const mask = BigInt((1 << w) - 1);
  const shift = BigInt(w);
  const half = 1 << (w - 1);
  let k = scalar;
  let sum = Point.ZERO;
  for (let i = 0; k > 0n; i++) {
    let digit = Number(k & mask);
    k >>= shift;
    if (digit > half) {
      digit -= 1 << w;
      k += 1n;
    }
    if (digit !== 0) {
      const multiple = rows[i]![Math.abs(digit) - 1]!;
      sum = sum.add(digit < 0 ? multiple.negate() : multiple);
    }
  }
  return sum;
}

/** The generator's multiples (8-bit windows, 4,224 points), made on the first check. */
let generator: Multiples | undefined;
/**
 * Multiples of the public keys of the signers checked last (5-bit windows: 848 points, about 170 kB
 * each): a check is then a fraction of a recovery. The least recently checked is dropped first.
 */
const signerKeys = new Map<string, Multiples>();
const SIGNER_KEYS = 1024;

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
      signerKeys.delete(key);
      signerKeys.set(key, known);
      const n = CURVE.n;
      const h = mod(BigInt(`0x${bytesToHex(digest)}`), n);
      const sInverse = invert(parsed.s, n);
      generator ??= multiplesOf(Point.BASE, 8);
      const point = times(generator, mod(h * sInverse, n)).add(times(known, mod(parsed.r * sInverse, n)));
      if (point.equals(Point.ZERO)) return false;
      const { x, y } = point.toAffine();
      return x === parsed.r && Number(y & 1n) === parsed.bit;
    }
    const recovered = new secp256k1.Signature(parsed.r, parsed.s).addRecoveryBit(parsed.bit).recoverPublicKey(digest);
    if (addressOf(recovered) !== key) return false;
    if (signerKeys.size >= SIGNER_KEYS) signerKeys.delete(signerKeys.keys().next().value!);
    signerKeys.set(key, multiplesOf(recovered, 5));
    return true;
  } catch {
    return false;
  }
}
