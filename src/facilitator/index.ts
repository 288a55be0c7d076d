/**
 * The x402 facilitator: verifies and settles `exact` EIP-3009 payments (`/verify`, `/settle`,
 * `/supported`, `/receipts/:tx`, `/settlements/:network/:asset/:payer/:nonce`), with a
 * database-backed single-use ledger, nonce-managed relayer lanes and a reconciler for
 * settlements whose receipt was not seen in time; and the `batch-settlement` scheme (payment
 * channels, channels/), dispatched by scheme, whose transactions share the relayer lanes.
 */
export { createFacilitator, type Facilitator, type FacilitatorSettings } from './create';
export { startFacilitator } from './server';
export type { Clock } from './types';
