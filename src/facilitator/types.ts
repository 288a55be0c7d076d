/**
 * The facilitator's wire shapes live in the x402 module (skill-market/x402), shared with the
 * resource servers that call it; the clock is the runtime's.
 */
import type { Address, Hex } from 'viem';
import type { BatchReceipt, FacilitatorReceipt } from 'skill-market/x402';

export type {
  FacilitatorReceipt as PaymentReceipt,
  ReceiptStatus,
  SettlementStatus,
  SupportedResponse,
  VerifyResponse,
} from 'skill-market/x402';
export { systemClock, unixSeconds, type Clock } from '../runtime/clock';

/** The token's own single-use key of an authorization (what `/settlements` looks up). */
export interface AuthorizationKey {
  network: string;
  asset: Address;
  payer: Address;
  nonce: Hex;
}

/** A settlement transaction as stored: one payment's, or a Multicall3 transaction's with each payment's outcome. */
export type SettlementReceipt = FacilitatorReceipt | BatchReceipt;
