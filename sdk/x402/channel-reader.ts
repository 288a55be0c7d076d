/**
 * Reading a payment channel of the x402BatchSettlement contract over JSON-RPC: its balance, what
 * was claimed, and a pending timed withdrawal. The payer's client recovers and re-syncs channels
 * with it; a skill server watches for withdrawals with it.
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS } from './batch-settlement';
import { jsonRpc, type JsonRpcOptions } from './json-rpc';
import type { Hex } from './patterns';

/** The contract's channel reads (the full ABI is the chain tooling's, src/chain/batch-settlement). */
const channelReadAbi = parseAbi([
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
]);

/** A channel's state on chain. */
export interface ChannelOnChain {
  balance: bigint;
  totalClaimed: bigint;
  /** A pending timed withdrawal (0 when none) and when it was started (unix seconds, 0 when none). */
  withdrawAmount: bigint;
  withdrawInitiatedAt: number;
}

/** Reads channels from the x402BatchSettlement contract. */
export interface ChannelReader {
  /** @throws Error when the RPC cannot be reached or answers an error */
  read(channelId: Hex): Promise<ChannelOnChain>;
}

/**
 * A reader of channel state over the JSON-RPC endpoint `rpcUrl`.
 *
 * @example const onChain = await createChannelReader('https://mainnet.base.org').read(channelId);
 */
export function createChannelReader(rpcUrl: string, options: JsonRpcOptions = {}): ChannelReader {
  const rpc = jsonRpc(rpcUrl, options);
  const call = async (data: Hex): Promise<Hex> => (await rpc('eth_call', [{ to: BATCH_SETTLEMENT_ADDRESS, data }, 'latest'])) as Hex;
  return {
    async read(channelId) {
      const [channel, pending] = await Promise.all([
        call(encodeFunctionData({ abi: channelReadAbi, functionName: 'channels', args: [channelId] })),
        call(encodeFunctionData({ abi: channelReadAbi, functionName: 'pendingWithdrawals', args: [channelId] })),
      ]);
      const [balance, totalClaimed] = decodeFunctionResult({ abi: channelReadAbi, functionName: 'channels', data: channel });
      const [withdrawAmount, initiatedAt] = decodeFunctionResult({
        abi: channelReadAbi,
        functionName: 'pendingWithdrawals',
        data: pending,
      });
      return { balance, totalClaimed, withdrawAmount, withdrawInitiatedAt: Number(initiatedAt) };
    },
  };
}
