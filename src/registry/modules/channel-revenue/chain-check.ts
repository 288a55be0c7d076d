import type { Address, Hex, PublicClient } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../../chain/batch-settlement';
import { LOG_CHUNK_BLOCKS, type LogRange, readLogsFrom } from './logs';

const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;

/** What the chain shows of a channel now (every figure in atomic units of its token). */
export interface ChannelOnChain {
  payer: Address;
  receiver: Address;
  token: Address;
  balance: bigint;
  totalClaimed: bigint;
  /** The part of `totalClaimed` a `settle` of the receiver swept out (claimed before its last sweep). */
  settledClaimed: bigint;
  /** A timed withdrawal the payer started (`pendingWithdrawals`): 0 and null when none. */
  withdrawAmount: bigint;
  withdrawInitiatedAt: Date | null;
}

export type ChannelVerdict =
  | { type: 'found'; channel: ChannelOnChain }
  /** No `ChannelCreated` for this id: never deposited into (or not yet), or not a channel at all. */
  | { type: 'missing' }
  | { type: 'retry'; reason: string };

/** The parts of a channel that never change (its id is their hash), when already known. */
export type KnownConfig = { payer: Address; receiver: Address; token: Address };

/** Where the contract's events are read from. */
export interface LogReadOptions {
  /** The first block read (MARKET_CHANNELS_FROM_BLOCK): none of the contract's events is older. */
  fromBlock: bigint;
  /** Widest range asked at once after a node refused the whole (see logs.ts). */
  chunkBlocks?: bigint;
}

/**
 * Reads a channel of x402BatchSettlement: its config from the `ChannelCreated` event (unless
 * known), `channels(channelId)` for balance and totalClaimed (state after mined claims only),
 * `pendingWithdrawals(channelId)` for a timed withdrawal the payer started, and
 * how much of that its receiver has settled: everything claimed when the receiver's
 * `totalSettled` equals its `totalClaimed`, otherwise the channel's claimed total as of the last
 * `Settled(receiver, token)` event (a sweep pays out all that was claimed before it). Events are
 * read from `logs.fromBlock` on, in chunks when the node refuses the whole range.
 */
export async function readChannel(
  client: PublicClient,
  channelId: Hex,
  known: KnownConfig | undefined,
  logs: LogReadOptions,
): Promise<ChannelVerdict> {
  const events: EventReader = (read) => readLogsFrom(client, logs.fromBlock, read, logs.chunkBlocks ?? LOG_CHUNK_BLOCKS);
  try {
    let config = known;
    if (!config) {
      const created = await events((range) =>
        client.getContractEvents({ ...contract, eventName: 'ChannelCreated', args: { channelId }, ...range }),
      );
      const first = created[0]?.args.config;
      if (!first) return { type: 'missing' };
      config = { payer: first.payer, receiver: first.receiver, token: first.token };
    }
    const [[balance, totalClaimed], [receiverClaimed, receiverSettled], [withdrawAmount, initiatedAt]] = await Promise.all([
      client.readContract({ ...contract, functionName: 'channels', args: [channelId] }),
      client.readContract({ ...contract, functionName: 'receivers', args: [config.receiver, config.token] }),
      client.readContract({ ...contract, functionName: 'pendingWithdrawals', args: [channelId] }),
    ]);
    const settledClaimed =
      totalClaimed === 0n
        ? 0n
        : receiverSettled === receiverClaimed
          ? totalClaimed
          : await claimedBeforeLastSweep(client, channelId, config, events);
    const withdrawInitiatedAt = withdrawAmount > 0n ? new Date(Number(initiatedAt) * 1000) : null;
    return { type: 'found', channel: { ...config, balance, totalClaimed, settledClaimed, withdrawAmount, withdrawInitiatedAt } };
  } catch (error) {
    const timedOut = (error as { name?: string }).name === 'TimeoutError';
    return { type: 'retry', reason: timedOut ? 'the RPC did not answer in time' : 'the RPC could not be read' };
  }
}

type EventReader = <T>(read: (range: LogRange) => Promise<T[]>) => Promise<T[]>;

async function claimedBeforeLastSweep(client: PublicClient, channelId: Hex, config: KnownConfig, events: EventReader): Promise<bigint> {
  const [claims, sweeps] = await Promise.all([
    events((range) => client.getContractEvents({ ...contract, eventName: 'Claimed', args: { channelId }, ...range })),
    events((range) =>
      client.getContractEvents({ ...contract, eventName: 'Settled', args: { receiver: config.receiver, token: config.token }, ...range }),
    ),
  ]);
  const position = (log: { blockNumber: bigint | null; logIndex: number | null }) =>
    [log.blockNumber ?? 0n, BigInt(log.logIndex ?? 0)] as const;
  const before = (a: readonly [bigint, bigint], b: readonly [bigint, bigint]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
  const lastSweep = sweeps.map(position).reduce<readonly [bigint, bigint] | undefined>((m, p) => (!m || before(m, p) ? p : m), undefined);
  if (!lastSweep) return 0n;
  let settled = 0n;
  for (const claim of claims) {
    const total = claim.args.totalClaimed ?? 0n;
    if (before(position(claim), lastSweep) && total > settled) settled = total;
  }
  return settled;
}
