/**
 * The x402 `batch-settlement` contracts for local chains: x402BatchSettlement.sol (payment channels:
 * deposit, claim, settle, refund, timed withdrawal) and ERC3009DepositCollector.sol, written from the
 * scheme's specification to the interface @x402/evm ships. Their ABIs, committed runtime code
 * (scripts/batch-settlement-artifact.ts), canonical addresses, EIP-712 types, installation on anvil, and whether a chain has them.
 */
export { batchSettlementAbi, erc3009DepositCollectorAbi } from './abi';
export { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from './addresses';
export { BATCH_SETTLEMENT_RUNTIME, ERC3009_DEPOSIT_COLLECTOR_RUNTIME } from './artifact';
export { installBatchSettlement } from './deploy';
export { CHANNEL_CONTRACTS, missingChannelContracts, missingText, type ChannelContract } from './deployed';
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
} from './typed-data';
