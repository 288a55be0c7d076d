import type { Address, PublicClient } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from './addresses';

/** A contract the `batch-settlement` scheme needs on a chain: its name and canonical address. */
export interface ChannelContract {
  name: string;
  address: Address;
}

/** The contracts a channel needs: x402BatchSettlement itself, and the collector its ERC-3009 deposits go through. */
export const CHANNEL_CONTRACTS: readonly ChannelContract[] = [
  { name: 'x402BatchSettlement', address: BATCH_SETTLEMENT_ADDRESS },
  { name: 'ERC3009DepositCollector', address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS },
];

/**
 * The channel contracts without code on the chain `client` reads, at `blockNumber` (default the
 * latest block); empty when all are there. Rejects when the chain cannot be read (a node that
 * serves no state of that block included): "not read" is never taken for "not there".
 *
 * @example
 * const missing = await missingChannelContracts(client);
 * if (missing.length > 0) logger.warn('payment channels are not offered', { missing });
 */
export async function missingChannelContracts(client: PublicClient, blockNumber?: bigint): Promise<ChannelContract[]> {
  const codes = await Promise.all(
    CHANNEL_CONTRACTS.map((contract) =>
      client.getCode({ address: contract.address, ...(blockNumber === undefined ? {} : { blockNumber }) }),
    ),
  );
  return CHANNEL_CONTRACTS.filter((_, i) => !codes[i] || codes[i] === '0x');
}

/**
 * The missing contracts in words, each address with its name.
 *
 * @example `${missingText(missing)} on eip155:8453` // "no code at 0x4020…0003 (x402BatchSettlement) on eip155:8453"
 */
export function missingText(missing: readonly ChannelContract[]): string {
  return `no code at ${missing.map((c) => `${c.address} (${c.name})`).join(' nor at ')}`;
}
