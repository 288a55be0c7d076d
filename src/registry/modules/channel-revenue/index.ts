/**
 * Calls paid over x402 `batch-settlement` payment channels: recorded from the skill server's call
 * records, counted as calls at once and as paid calls and revenue only once the chain shows them
 * claimed for the skill's payment address (see store.ts, the one place that counts them), checked
 * in the payment verifier's background rounds (and read again when a payer looks at their
 * channels); the state of a consumer's own channel calls for their history.
 */
export { type ChannelRefresher, type ChannelRound, channelRefresher, checkDueChannels } from './checker';
export { channelCallOf, channelUsageOf } from './intake';
export { type ChannelCall, recordChannelCalls } from './store';
export { type ChannelTotals, channelLedger, channelTotals, listChannels } from './listing';
export { channelViewsOf, isChannelVoucher } from './history';
