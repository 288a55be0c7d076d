/**
 * The x402 facilitator (`/verify`, `/settle`, `/supported`, `/receipts/:tx`,
 * `/settlements/:network/:asset/:payer/:nonce`), each request dispatched to the scheme it names
 * (service.ts), each scheme in its folder under schemes/: `exact` (EIP-3009 transfers, with a
 * database-backed single-use ledger, Multicall3 settlement and a reconciler for settlements whose
 * receipt was not seen in time) and `batch-settlement` (payment channels, schemes/channel/). Their
 * transactions share the nonce-managed relayer lanes.
 */
export { createFacilitator, type Facilitator, type FacilitatorSettings } from './create';
export { startFacilitator } from './server';
export type { Clock } from './types';
