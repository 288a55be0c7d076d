/**
 * The x402 facilitator: verifies and settles `exact` EIP-3009 payments (`/verify`, `/settle`,
 * `/supported`, `/receipts/:tx`, `/settlements/:network/:asset/:payer/:nonce`), with a
 * database-backed single-use ledger, nonce-managed relayer lanes and a reconciler for
 * settlements whose receipt was not seen in time.
 */
export { createFacilitator, type Facilitator, type FacilitatorDeps, type FacilitatorSettings } from './create';
export { startFacilitator, type RunningFacilitator } from './server';
export { FacilitatorRequestError } from './request';
export { REASONS } from './reasons';
export type { ReconcileReport } from './reconciler';
export {
  systemClock,
  type Clock,
  type PaymentReceipt,
  type ReceiptStatus,
  type SettlementStatus,
  type SettleResponse,
  type SupportedKind,
  type SupportedResponse,
  type VerifyResponse,
} from './types';
