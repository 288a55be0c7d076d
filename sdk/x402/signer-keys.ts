/**
 * Whether a known address signed a 32-byte digest, checked fast for signers seen again: computed
 * directly with @noble/curves (the curve library viem itself uses). A signer's first signature is
 * checked by recovering its public key (as viem's recoverAddress does); the key is then kept, and
 * later signatures are checked against it (the point u1·G + u2·Q must be R: its x is r, its y's
 * parity the recovery bit), which skips the square root and the hash of a recovery; once a signer
 * has been checked often, with precomputed multiples of its key, a fraction of a recovery. The
 * verdict is recovery's in every case: true exactly when recovering the signature's key gives the
 * signer. Used on every channel call (the skill server's voucher check) and every receipt check
 * (the buyer's, the registry's).
 */
import { invert, mod } from '@noble/curves/abstract/modular';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex } from '@noble/hashes/utils';

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

/** The generator's multiples (8-bit windows, 4,224 points), made when a first signer's are. */
let generator: Multiples | undefined;

/**
 * r, s and the recovery bit of a 65-byte r‖s‖v signature (v 0, 1, 27 or 28), or undefined; with
 * `lowS`, a high s is refused too (as a contract's ECDSA library refuses it).
 */
function parseSignature(signature: string, lowS: boolean): { r: bigint; s: bigint; bit: number } | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const v = Number.parseInt(signature.slice(130), 16);
  const bit = v >= 27 ? v - 27 : v;
  if (bit !== 0 && bit !== 1) return undefined;
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  if (r === 0n || r >= CURVE.n || s === 0n || s >= CURVE.n || (lowS && s > CURVE.n >> 1n)) return undefined;
  return { r, s, bit };
}

const addressOf = (point: CurvePoint) => `0x${bytesToHex(keccak_256(point.toRawBytes(false).subarray(1)).subarray(12))}`;

/** A signer's kept public key: how often it was checked, and its multiples once that is often. */
interface KeptKey {
  point: CurvePoint;
  checks: number;
  multiples?: Multiples;
}

/**
 * The public keys of the signers checked last, the least recently checked dropped first.
 *
 * @example
 * const vouchers = new SignerKeys({ keys: 1024, multiplesAfter: 1, lowS: true });
 * vouchers.signedBy(digest, signature, payerAuthorizer); // true or false
 * @internal
 */
export class SignerKeys {
  private readonly kept = new Map<string, KeptKey>();

  /**
   * @param options.keys How many signers' keys to keep.
   * @param options.multiplesAfter After how many checks of a signer its key's multiples are made
   *   (5-bit windows, 848 points, about 170 kB; with the generator's, made once, some 30 ms of CPU).
   * @param options.lowS Refuse a high s (what a contract's ECDSA check refuses); recovery accepts it.
   */
  constructor(private readonly options: { keys: number; multiplesAfter: number; lowS: boolean }) {}

  /**
   * Whether recovering `signature` over `digest` gives `signer` (an address, any case).
   *
   * @example keys.signedBy(hexToBytes(receiptHash(payload)), signed.signature, listing.receiptSigner)
   */
  signedBy(digest: Uint8Array, signature: string, signer: string): boolean {
    const parsed = parseSignature(signature, this.options.lowS);
    if (!parsed) return false;
    const name = signer.toLowerCase();
    const known = this.kept.get(name);
    try {
      if (known) {
        this.kept.delete(name);
        this.kept.set(name, known);
        known.checks++;
        if (!known.multiples && known.checks >= this.options.multiplesAfter) {
          generator ??= multiplesOf(Point.BASE, 8);
          known.multiples = multiplesOf(known.point, 5);
        }
        const n = CURVE.n;
        const h = mod(BigInt(`0x${bytesToHex(digest)}`), n);
        const sInverse = invert(parsed.s, n);
        const u1 = mod(h * sInverse, n);
        const u2 = mod(parsed.r * sInverse, n);
        const point = known.multiples
          ? times(generator!, u1).add(times(known.multiples, u2))
          : (Point.BASE.multiplyAndAddUnsafe(known.point, u1, u2) ?? Point.ZERO);
        if (point.equals(Point.ZERO)) return false;
        const { x, y } = point.toAffine();
        return x === parsed.r && Number(y & 1n) === parsed.bit;
      }
      const recovered = new secp256k1.Signature(parsed.r, parsed.s).addRecoveryBit(parsed.bit).recoverPublicKey(digest);
      if (addressOf(recovered) !== name) return false;
      if (this.kept.size >= this.options.keys) this.kept.delete(this.kept.keys().next().value!);
      const kept: KeptKey = { point: recovered, checks: 1 };
      if (this.options.multiplesAfter <= 1) {
        generator ??= multiplesOf(Point.BASE, 8);
        kept.multiples = multiplesOf(recovered, 5);
      }
      this.kept.set(name, kept);
      return true;
    } catch {
      return false;
    }
  }
}
