/** The `upto` scheme (usage-based charges up to a signed Permit2 maximum): verify, settle, the single-use ledger. */
export { createUptoScheme, type UptoReconcileReport } from './scheme';
