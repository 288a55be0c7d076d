/**
 * x402 extensions a 402 declares (`PaymentRequired.extensions`: `bazaar`, `payment-identifier`, …)
 * go back in the payment payload, as every x402 client does: the facilitator reads them there
 * (the Bazaar catalogues a resource from its echoed `bazaar` declaration). Done once, here, for
 * every scheme's payload.
 */
import { encodeBase64Json } from '../x402/index';
import type { SignedPayment } from './scheme';

/**
 * Puts the 402's `declared` extensions in `payment`'s payload and re-encodes its proof; an
 * extension the scheme set itself keeps the scheme's value. Nothing changes when none was
 * declared. The payment object stays the same one: a scheme may know its payments by identity
 * (the channel scheme holds its lock until `finish` of that very payment).
 */
export function echoDeclaredExtensions(payment: SignedPayment, declared: Record<string, unknown> | undefined): void {
  if (!declared || Object.keys(declared).length === 0) return;
  payment.payload = { ...payment.payload, extensions: { ...declared, ...payment.payload.extensions } };
  payment.proof = encodeBase64Json(payment.payload);
}
