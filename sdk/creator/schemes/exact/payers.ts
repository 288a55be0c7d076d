/**
 * When the facilitator verifies a payment: before the handler runs (`first`: /verify, handler,
 * /settle) or, for payers who already paid this server, at settlement (`at-settlement`: the
 * default). The facilitator's /settle runs every check /verify does (signature, replay, balance,
 * a simulated transfer, the payer's unconfirmed amount), so a known payer's call needs one round
 * trip to it instead of two. What this server checks first, for such calls: the signature
 * recovers to the payer (ECDSA) and the authorization is inside its time window.
 *
 * What it costs the creator: a known payer who emptied their wallet gets the handler run with the
 * result withheld (402, nothing charged), at most `maxInFlight` times at once; the refusal takes
 * them off the list, so their next call is verified first again. A new payer, a contract wallet,
 * or a signature that does not check out here is always verified first.
 */
import { isSignedByPayer, type DecodedPayment, type PaymentRequirements } from '../../../x402/index';
import { ServeConfigError } from '../../errors';

/** `serve({ verify })`: see {@link VERIFY_MODES}. */
export type VerifyMode = 'first' | 'at-settlement';

/**
 * `first`: every call is verified by the facilitator before its handler runs. `at-settlement`
 * (default): payers who already paid this server are verified by the facilitator's settle, one
 * round trip less; new payers are verified first.
 *
 * @example serve(skills, { verify: VERIFY_MODES[0] }) // 'first': expensive handlers, side effects
 */
export const VERIFY_MODES = ['first', 'at-settlement'] as const satisfies readonly VerifyMode[];

/** Known payers kept (least recently paid forgotten first). */
const MAX_KNOWN_PAYERS = 10_000;
/** Calls of one payer verified at settlement at once; more wait for /verify like a new payer's. */
const MAX_IN_FLIGHT_PER_PAYER = 8;
/** The authorization must stay valid this long for a facilitator to take it (as /verify and /settle ask). */
export const VALID_BEFORE_MARGIN_SECONDS = 6;

export interface PayerTrust {
  /**
   * True when this call may be verified at settlement (known payer, a slot free, signature and
   * time window good here); a true answer holds a slot until {@link release}.
   */
  take(payment: DecodedPayment, requirements: PaymentRequirements, nowMs: number): Promise<boolean>;
  /** Gives back the slot of a call that {@link take} allowed. */
  release(payer: string): void;
  /** A payment of this payer settled: their next calls may be verified at settlement. */
  settled(payer: string): void;
  /** A settlement of this payer was refused: verify them first again. */
  refused(payer: string): void;
}

export function verifyMode(value: string | undefined): VerifyMode {
  const mode = value ?? 'at-settlement';
  if (!(VERIFY_MODES as readonly string[]).includes(mode)) throw new ServeConfigError(`verify must be one of ${VERIFY_MODES.join(', ')}`);
  return mode as VerifyMode;
}

export function createPayerTrust(mode: VerifyMode): PayerTrust {
  /** Known payers (lowercase) and their calls in flight, in the order they last paid. */
  const known = new Map<string, { inFlight: number }>();
  const id = (payer: string) => payer.toLowerCase();
  return {
    async take(payment, requirements, nowMs) {
      if (mode === 'first') return false;
      const entry = known.get(id(payment.authorization.from));
      if (!entry || entry.inFlight >= MAX_IN_FLIGHT_PER_PAYER) return false;
      const now = Math.floor(nowMs / 1000);
      const a = payment.authorization;
      if (BigInt(a.validAfter) > BigInt(now) || BigInt(a.validBefore) < BigInt(now + VALID_BEFORE_MARGIN_SECONDS)) return false;
      entry.inFlight++;
      const signed = await isSignedByPayer(payment, requirements).catch(() => false);
      if (!signed) entry.inFlight--;
      return signed;
    },
    release(payer) {
      const entry = known.get(id(payer));
      if (entry && entry.inFlight > 0) entry.inFlight--;
    },
    settled(payer) {
      const key = id(payer);
      const entry = known.get(key) ?? { inFlight: 0 };
      known.delete(key); // re-inserted last: most recently paid
      known.set(key, entry);
      if (known.size > MAX_KNOWN_PAYERS) known.delete(known.keys().next().value as string);
    },
    refused(payer) {
      known.delete(id(payer));
    },
  };
}
