/**
 * The x402BatchSettlement contract as the facilitator uses it: a channel's state, a receiver's
 * unsettled total, the calldata of deposits, claims, settles and refunds, and eth_call simulations.
 */
import { encodeFunctionData, getAddress, type Address, type Hex, type PublicClient } from 'viem';
import type { ChannelConfig, VoucherClaim } from 'skill-market/x402';
import {
  BATCH_SETTLEMENT_ADDRESS,
  batchSettlementAbi,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  erc3009CollectorData,
} from '../../../chain/batch-settlement';
import { revertText } from '../../chain';

export const SETTLEMENT_CONTRACT = getAddress(BATCH_SETTLEMENT_ADDRESS);
export const DEPOSIT_COLLECTOR = getAddress(ERC3009_DEPOSIT_COLLECTOR_ADDRESS);

/** A channel's on-chain state, the numbers of the spec's channel snapshot. */
export interface ChannelState {
  balance: bigint;
  totalClaimed: bigint;
  withdrawRequestedAt: number;
  refundNonce: bigint;
}

/** The config as the contract's tuple type wants it. */
function contractConfig(config: ChannelConfig) {
  return {
    payer: getAddress(config.payer),
    payerAuthorizer: getAddress(config.payerAuthorizer),
    receiver: getAddress(config.receiver),
    receiverAuthorizer: getAddress(config.receiverAuthorizer),
    token: getAddress(config.token),
    withdrawDelay: config.withdrawDelay,
    salt: config.salt,
  };
}

function claimArgs(claims: readonly VoucherClaim[]) {
  return claims.map((c) => ({
    voucher: { channel: contractConfig(c.voucher.channel), maxClaimableAmount: BigInt(c.voucher.maxClaimableAmount) },
    signature: c.signature,
    totalClaimed: BigInt(c.totalClaimed),
  }));
}

export function depositCall(
  config: ChannelConfig,
  amount: bigint,
  auth: { validAfter: string; validBefore: string; salt: string; signature: Hex },
) {
  const data = erc3009CollectorData(BigInt(auth.validAfter), BigInt(auth.validBefore), BigInt(auth.salt), auth.signature);
  return encodeFunctionData({
    abi: batchSettlementAbi,
    functionName: 'deposit',
    args: [contractConfig(config), amount, DEPOSIT_COLLECTOR, data],
  });
}

export function claimCall(claims: readonly VoucherClaim[], signature: Hex): Hex {
  return encodeFunctionData({ abi: batchSettlementAbi, functionName: 'claimWithSignature', args: [claimArgs(claims), signature] });
}

export function settleCall(receiver: Address, token: Address): Hex {
  return encodeFunctionData({ abi: batchSettlementAbi, functionName: 'settle', args: [getAddress(receiver), getAddress(token)] });
}

export function refundCall(config: ChannelConfig, amount: bigint, nonce: bigint, signature: Hex): Hex {
  return encodeFunctionData({
    abi: batchSettlementAbi,
    functionName: 'refundWithSignature',
    args: [contractConfig(config), amount, nonce, signature],
  });
}

/** Several calls of the contract in one transaction (its own `multicall`: any failure reverts all). */
export function multicallCall(calls: readonly Hex[]): Hex {
  return encodeFunctionData({ abi: batchSettlementAbi, functionName: 'multicall', args: [[...calls]] });
}

export async function readChannelState(client: PublicClient, channelId: Hex): Promise<ChannelState> {
  const contract = { address: SETTLEMENT_CONTRACT, abi: batchSettlementAbi } as const;
  const [[balance, totalClaimed], [, initiatedAt], refundNonce] = await Promise.all([
    client.readContract({ ...contract, functionName: 'channels', args: [channelId] }),
    client.readContract({ ...contract, functionName: 'pendingWithdrawals', args: [channelId] }),
    client.readContract({ ...contract, functionName: 'refundNonce', args: [channelId] }),
  ]);
  return { balance, totalClaimed, withdrawRequestedAt: Number(initiatedAt), refundNonce };
}

export async function readUnsettled(client: PublicClient, receiver: Address, token: Address): Promise<bigint> {
  const [claimed, settled] = await client.readContract({
    address: SETTLEMENT_CONTRACT,
    abi: batchSettlementAbi,
    functionName: 'receivers',
    args: [getAddress(receiver), getAddress(token)],
  });
  return claimed - settled;
}

/** eth_call of `data` on the contract from `from`: undefined when it would succeed, else the revert text. */
export async function simulate(client: PublicClient, from: Address, data: Hex): Promise<string | undefined> {
  try {
    await client.call({ account: from, to: SETTLEMENT_CONTRACT, data });
    return undefined;
  } catch (error) {
    return revertText(error);
  }
}

/** The snapshot the spec returns in `/verify` `extra` and `/settle` `extra.channelState`. */
export function snapshot(channelId: Hex, state: ChannelState) {
  return {
    channelId,
    balance: state.balance.toString(),
    totalClaimed: state.totalClaimed.toString(),
    withdrawRequestedAt: state.withdrawRequestedAt,
    refundNonce: state.refundNonce.toString(),
  };
}
