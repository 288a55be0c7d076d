/**
 * What a payer of the x402 `batch-settlement` scheme (payment channels) signs and names: the
 * contract's addresses (the same on Base and local chains) and EIP-712 domain, channel configs and
 * their id, vouchers, and the ERC-3009 deposit authorization the deposit collector redeems.
 */
import { type Address, encodeAbiParameters, type Hex, hashTypedData, keccak256 } from 'viem';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from './eip3009';

/**
 * The x402BatchSettlement contract (channels, deposits, claims, withdrawals).
 *
 * @example readContract({ address: BATCH_SETTLEMENT_ADDRESS, abi, functionName: 'channels', args: [channelId] })
 */
export const BATCH_SETTLEMENT_ADDRESS = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
/**
 * The collector that redeems a payer's ERC-3009 ReceiveWithAuthorization into a channel.
 *
 * @example message.to = ERC3009_DEPOSIT_COLLECTOR_ADDRESS // of a deposit's authorization
 */
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS = '0x4020806089470a89826cB9fB1f4059150b550004';

/**
 * Shortest withdraw delay of a channel, seconds (15 minutes).
 *
 * @example config.withdrawDelay >= MIN_WITHDRAW_DELAY
 */
export const MIN_WITHDRAW_DELAY = 900;
/**
 * Longest withdraw delay of a channel, seconds (30 days).
 *
 * @example config.withdrawDelay <= MAX_WITHDRAW_DELAY
 */
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

/**
 * The contract's EIP-712 domain on `chainId`.
 *
 * @example signTypedData({ domain: batchSettlementDomain(8453), types: voucherTypes, primaryType: 'Voucher', message })
 */
export function batchSettlementDomain(chainId: number) {
  return { name: 'x402 Batch Settlement', version: '1', chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS } as const;
}

/**
 * EIP-712 types of a channel config (hashed into the channel id).
 *
 * @example hashTypedData({ domain, types: channelConfigTypes, primaryType: 'ChannelConfig', message: config })
 */
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

/**
 * EIP-712 types of a voucher: the channel and the cumulative amount the receiver may claim.
 *
 * @example signTypedData({ domain, types: voucherTypes, primaryType: 'Voucher', message: { channelId, maxClaimableAmount } })
 */
export const voucherTypes = {
  Voucher: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'maxClaimableAmount', type: 'uint128' },
  ],
} as const;

/**
 * EIP-712 types a receiver authorizer signs a cooperative refund with (`refundWithSignature`).
 *
 * @example signTypedData({ domain, types: refundTypes, primaryType: 'Refund', message: { channelId, nonce, amount } })
 */
export const refundTypes = {
  Refund: [
    { name: 'channelId', type: 'bytes32' },
    { name: 'nonce', type: 'uint256' },
    { name: 'amount', type: 'uint128' },
  ],
} as const;

/**
 * EIP-712 types a receiver authorizer signs a batch of claims with (`claimWithSignature`).
 *
 * @example signTypedData({ domain, types: claimBatchTypes, primaryType: 'ClaimBatch', message: { claims: [{ channelId, maxClaimableAmount, totalClaimed }] } })
 */
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
 *
 * @example signTypedData({ domain: tokenDomain, types: receiveWithAuthorizationTypes, primaryType: 'ReceiveWithAuthorization', message })
 */
export const receiveWithAuthorizationTypes = {
  ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization,
} as const;

/** Channel ids already computed, by chain and config: a skill server checks one on every call. */
const channelIds = new Map<string, Hex>();
const CHANNEL_IDS = 4096;

/**
 * The channel id: the EIP-712 hash of `config` under the contract's domain on `chainId` (kept for
 * the last few thousand configs: the hash costs about a tenth of a millisecond).
 *
 * @example channelIdOf(config, 8453) // '0x…' (bytes32), the key of `channels(channelId)`
 */
export function channelIdOf(config: ChannelConfig, chainId: number): Hex {
  const { payer, payerAuthorizer, receiver, receiverAuthorizer, token, withdrawDelay, salt } = config;
  const key = `${chainId}|${payer}|${payerAuthorizer}|${receiver}|${receiverAuthorizer}|${token}|${withdrawDelay}|${salt}`;
  const known = channelIds.get(key);
  if (known) return known;
  const id = hashTypedData({
    domain: batchSettlementDomain(chainId),
    types: channelConfigTypes,
    primaryType: 'ChannelConfig',
    message: config,
  });
  if (channelIds.size >= CHANNEL_IDS) channelIds.delete(channelIds.keys().next().value!);
  channelIds.set(key, id);
  return id;
}

/**
 * The EIP-3009 nonce of a deposit: binds the authorization to one channel.
 *
 * @example erc3009DepositNonce(channelId, salt) // the authorization's nonce
 */
export function erc3009DepositNonce(channelId: Hex, salt: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [channelId, salt]));
}
