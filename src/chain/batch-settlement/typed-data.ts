/**
 * The EIP-712 side of the `batch-settlement` scheme. What a payer signs lives in the SDK
 * (skill-market/x402) and is re-exported here; what only receivers, facilitators and the chain
 * tooling sign (refunds, claim batches) and the deposit collector's data are here.
 */
import { encodeAbiParameters, type Hex } from 'viem';

export {
  type ChannelConfig,
  MAX_WITHDRAW_DELAY,
  MIN_WITHDRAW_DELAY,
  batchSettlementDomain,
  channelConfigTypes,
  channelIdOf,
  erc3009DepositNonce,
  receiveWithAuthorizationTypes,
  voucherTypes,
} from 'skill-market/x402';

export const refundTypes = {
  Refund: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'nonce', type: 'uint256' },
    { name: 'amount', type: 'uint128' },
  ],
} as const;

export const claimBatchTypes = {
  ClaimBatch: [{ name: 'claims', type: 'ClaimEntry[]' }],
  ClaimEntry: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'maxClaimableAmount', type: 'uint128' },
    { name: 'totalClaimed', type: 'uint128' },
  ],
} as const;

/** `collectorData` of the ERC-3009 deposit collector. */
export function erc3009CollectorData(validAfter: bigint, validBefore: bigint, salt: bigint, signature: Hex): Hex {
  return encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
    [validAfter, validBefore, salt, signature],
  );
}
