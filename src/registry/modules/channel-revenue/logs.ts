import type { PublicClient } from 'viem';

/**
 * Widest block range asked of a node in one `eth_getLogs` once it has refused a wider one: public
 * Base RPCs refuse or time out on ranges much above this.
 */
export const LOG_CHUNK_BLOCKS = 10_000n;

/** A block range of one log read: from a block to the head, or between two blocks. */
export type LogRange = { fromBlock: bigint; toBlock: bigint | 'latest' };

/**
 * The logs `read` finds from `fromBlock` to the head: asked in one range first; when the node
 * refuses that (its error names the limit in no standard way, so any error will do) and the range
 * is wider than `chunkBlocks`, asked again in consecutive ranges of `chunkBlocks`, in order. A
 * chunk's error is thrown; so is the error of a range no wider than a chunk.
 */
export async function readLogsFrom<T>(
  client: Pick<PublicClient, 'getBlockNumber'>,
  fromBlock: bigint,
  read: (range: LogRange) => Promise<T[]>,
  chunkBlocks: bigint = LOG_CHUNK_BLOCKS,
): Promise<T[]> {
  try {
    return await read({ fromBlock, toBlock: 'latest' });
  } catch (error) {
    const head = await client.getBlockNumber();
    // A start past the head has nothing to read (some nodes call such a range invalid).
    if (fromBlock > head) return [];
    if (head - fromBlock + 1n <= chunkBlocks) throw error;
    const logs: T[] = [];
    for (let start = fromBlock; start <= head; start += chunkBlocks) {
      const end = start + chunkBlocks - 1n;
      logs.push(...(await read({ fromBlock: start, toBlock: end < head ? end : head })));
    }
    return logs;
  }
}
