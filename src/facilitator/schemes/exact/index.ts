/**
 * The `exact` scheme (EIP-3009 transfers): verify and settle, one transaction per payment or
 * several in a Multicall3 transaction, the single-use ledger and the reconciler.
 */
export { createExactScheme, EXACT_SCHEME } from './scheme';
export type { ReconcileReport } from './reconciler';
