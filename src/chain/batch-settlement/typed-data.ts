/**
 * The EIP-712 side of the `batch-settlement` scheme. What payers and receivers sign (vouchers,
 * deposits, claim batches, refunds) lives in the SDK (skill-market/x402) and is re-exported here;
 * the deposit collector's data is here.
 */
import { encodeAbiParameters, type Hex } from 'viem';

export {
  type ChannelConfig,
  MAX_WITHDRAW_DELAY,
  MIN_WITHDRAW_DELAY,
  batchSettlementDomain,
  channelConfigTypes,
  channelIdOf,
  claimBatchTypes,
  erc3009DepositNonce,
  receiveWithAuthorizationTypes,
  refundTypes,
  voucherTypes,
} from 'skill-market/x402';

/** `collectorData` of the ERC-3009 deposit collector. */
export function erc3009CollectorData(validAfter: bigint, validBefore: bigint, salt: bigint, signature: Hex): Hex {
  return encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
    [validAfter, validBefore, salt, signature],
  );
}
