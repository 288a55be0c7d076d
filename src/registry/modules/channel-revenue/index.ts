/**
 * Calls paid over x402 `batch-settlement` payment channels: recorded from the skill server's call
 * records, counted as paid calls and revenue only once the chain shows them claimed for the
 * skill's payment address (see store.ts, the one place that counts them), checked in the payment
 * verifier's background rounds.
 */
export { type ChannelRound, checkDueChannels } from './checker';
export { channelCallOf } from './intake';
export { type ChannelCall, recordChannelCalls } from './store';
export { type ChannelTotals, channelLedger, channelTotals, listChannels } from './listing';
