/**
 * The EIP-712 side of the `batch-settlement` scheme lives in the SDK (skill-market/x402), which
 * pays over channels; the chain tooling takes it from there.
 */
export {
  type ChannelConfig,
  MAX_WITHDRAW_DELAY,
  MIN_WITHDRAW_DELAY,
  batchSettlementDomain,
  channelConfigTypes,
  channelIdOf,
  claimBatchTypes,
  erc3009CollectorData,
  erc3009DepositNonce,
  receiveWithAuthorizationTypes,
  refundTypes,
  voucherTypes,
} from 'skill-market/x402';
