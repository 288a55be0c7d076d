/**
 * The `batch-settlement` scheme (payment channels): verify and settle of its payloads, the ledger
 * of its transactions (recorded before they are sent) and the pass that resumes them after a stop.
 */
export { createChannelScheme } from './scheme';
export type { ResumeReport } from './resume';
