/**
 * The EIP-712 side and addresses of the x402 `batch-settlement` scheme (payment channels): the
 * contract's domain, the typed-data types of channel configs, vouchers, refunds and claim
 * batches, the channel id, the ERC-3009 deposit authorization the deposit collector redeems, and
 * the contract's channel reads. The same addresses on Base and on local chains.
 */
import { type Address, encodeAbiParameters, type Hex, hashTypedData, keccak256, parseAbi } from 'viem';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from './eip3009';

export const BATCH_SETTLEMENT_ADDRESS = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS = '0x4020806089470a89826cB9fB1f4059150b550004';

/** Withdraw delay bounds in seconds: 15 minutes to 30 days. */
export const MIN_WITHDRAW_DELAY = 900;
export const MAX_WITHDRAW_DELAY = 2_592_000;

/** A channel's immutable configuration; its EIP-712 hash is the channel id. */
export type ChannelConfig = {
  payer: Address;
  /** EOA that signs vouchers, or the zero address to check them against `payer` (ERC-1271 too). */
  payerAuthorizer: Address;
  receiver: Address;
  /** Signs claim batches and refunds; never the zero address. */
  receiverAuthorizer: Address;
  token: Address;
  /** Seconds, MIN_WITHDRAW_DELAY to MAX_WITHDRAW_DELAY. */
  withdrawDelay: number;
  salt: Hex;
};

/** The contract's EIP-712 domain on `chainId`. */
export function batchSettlementDomain(chainId: number) {
  return { name: 'x402 Batch Settlement', version: '1', chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS } as const;
}

export const channelConfigTypes = {
  ChannelConfig: [
    { name: 'payer', type: 'address' },
    { name: 'payerAuthorizer', type: 'address' },
    { name: 'receiver', type: 'address' },
    { name: 'receiverAuthorizer', type: 'address' },
    { name: 'token', type: 'address' },
    { name: 'withdrawDelay', type: 'uint40' },
    { name: 'salt', type: 'bytes32' },
  ],
} as const;

export const voucherTypes = {
  Voucher: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'maxClaimableAmount', type: 'uint128' },
  ],
} as const;

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

/**
 * EIP-3009 `ReceiveWithAuthorization` (the fields of TransferWithAuthorization), under the token's
 * own domain; `to` is the deposit collector, which alone may redeem it.
 */
export const receiveWithAuthorizationTypes = {
  ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization,
} as const;

/**
 * The channel id: the EIP-712 hash of `config` under the contract's domain on `chainId`.
 *
 * @example channelIdOf(config, 8453) // '0x…' (bytes32), the key of `channels(channelId)`
 */
export function channelIdOf(config: ChannelConfig, chainId: number): Hex {
  return hashTypedData({
    domain: batchSettlementDomain(chainId),
    types: channelConfigTypes,
    primaryType: 'ChannelConfig',
    message: config,
  });
}

/**
 * The digest a voucher signs: unique per channel and cumulative amount.
 *
 * @example voucherDigest(channelId, 3000n, 8453) // what names a voucher payment in receipts
 */
export function voucherDigest(channelId: Hex, maxClaimableAmount: bigint, chainId: number): Hex {
  return hashTypedData({
    domain: batchSettlementDomain(chainId),
    types: voucherTypes,
    primaryType: 'Voucher',
    message: { channelId, maxClaimableAmount },
  });
}

/** The EIP-3009 nonce of a deposit: binds the authorization to one channel. */
export function erc3009DepositNonce(channelId: Hex, salt: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [channelId, salt]));
}

/** `collectorData` of the ERC-3009 deposit collector. */
export function erc3009CollectorData(validAfter: bigint, validBefore: bigint, salt: bigint, signature: Hex): Hex {
  return encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
    [validAfter, validBefore, salt, signature],
  );
}

/** The contract's reads and the payer's withdrawal, as a client needs them. */
export const channelReadAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
  'function initiateWithdraw(ChannelConfig config, uint128 amount)',
  'function finalizeWithdraw(ChannelConfig config)',
]);
