/**
 * The payer's cooperative refund (refund.ts), loaded when first asked: a page or program
 * that only pays does not carry it.
 */
import type { RefundOptions, RefundOutcome } from './refund';

export type { RefundOptions, RefundOutcome } from './refund';

/**
 * Asks a payment channel's server for the unspent deposit back: the channel's voucher signer
 * signs a zero-charge voucher, the server claims what it charged and its facilitator returns the
 * rest to the payer in one transaction it pays for (no ETH needed).
 *
 * @example
 * const outcome = await refundChannel({ record, signer: eip1193Signer(provider, address), fetch });
 * if (outcome.type === 'refunded') console.log(`${outcome.amount} back in ${outcome.transaction}`);
 */
export async function refundChannel(options: RefundOptions): Promise<RefundOutcome> {
  return (await import('./refund')).refundChannel(options);
}
