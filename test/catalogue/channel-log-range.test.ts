/**
 * The registry reads a payment channel's `ChannelCreated` event from its configured start block
 * (MARKET_CHANNELS_FROM_BLOCK), not from block 0, and when the node refuses a range as too wide,
 * in chunks the node accepts: on anvil, a start past the channel's creation finds nothing, one at
 * or before it finds the channel, and a node that refuses wide ranges still gives it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createPublicClient, custom, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { channelIdOf } from '../../src/chain/batch-settlement';
import { readChannel } from '../../src/registry/modules/channel-revenue/chain-check';
import { channelConfig, depositToChannel, type LocalChain, startChain } from '../support/chain';

let chain: LocalChain;
let channelId: Hex;
let created: TransactionReceipt;
let receiver: `0x${string}`;

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  // Blocks before the channel, so a read from block 0 spans several chunks of a few blocks.
  await chain.testClient.mine({ blocks: 12 });
  const payer = await chain.createAccount({ usdc: 1_000_000n });
  receiver = (await chain.createAccount()).address;
  const config = channelConfig(chain, { payer: payer.address, receiver, receiverAuthorizer: (await chain.createAccount()).address });
  created = await depositToChannel(chain, payer, config, 10_000n);
  channelId = channelIdOf(config, chain.chainId);
  await chain.testClient.mine({ blocks: 3 });
}, 60_000);

afterAll(() => chain?.stop());

/**
 * A client of the anvil node that, like public Base RPCs, refuses `eth_getLogs` over more than
 * `maxBlocks` blocks; records the ranges it answered.
 */
function rangeLimitedClient(maxBlocks: bigint, answered: [bigint, bigint][]): PublicClient {
  const call = async (method: string, params: unknown) => {
    const res = await fetch(chain.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
    if (body.error) throw Object.assign(new Error(body.error.message), { code: body.error.code });
    return body.result;
  };
  return createPublicClient({
    transport: custom({
      async request({ method, params }) {
        if (method === 'eth_getLogs') {
          const [filter] = params as [{ fromBlock: Hex; toBlock: Hex | 'latest' }];
          const from = BigInt(filter.fromBlock);
          const to = filter.toBlock === 'latest' ? BigInt((await call('eth_blockNumber', [])) as Hex) : BigInt(filter.toBlock);
          if (to - from + 1n > maxBlocks) throw Object.assign(new Error(`block range greater than ${maxBlocks} max`), { code: -32600 });
          answered.push([from, to]);
        }
        return call(method, params);
      },
    }),
  }) as PublicClient;
}

describe('reading a channel from a start block', () => {
  it('finds nothing when the start block is past the channel’s creation', async () => {
    const verdict = await readChannel(chain.publicClient as PublicClient, channelId, undefined, { fromBlock: created.blockNumber + 1n });
    expect(verdict).toEqual({ type: 'missing' });
  });

  it('finds the channel from a start block at or before its creation', async () => {
    for (const fromBlock of [created.blockNumber, created.blockNumber - 5n, 0n]) {
      const verdict = await readChannel(chain.publicClient as PublicClient, channelId, undefined, { fromBlock });
      expect({ fromBlock, verdict }).toMatchObject({
        fromBlock,
        verdict: { type: 'found', channel: { receiver, token: chain.token.address, balance: 10_000n, totalClaimed: 0n } },
      });
    }
  });

  it('finds nothing from a start block past the head', async () => {
    const head = await chain.publicClient.getBlockNumber();
    expect(await readChannel(chain.publicClient as PublicClient, channelId, undefined, { fromBlock: head + 100n })).toEqual({
      type: 'missing',
    });
  });

  it('reads in chunks the node accepts when it refuses the whole range, and finds the channel', async () => {
    const answered: [bigint, bigint][] = [];
    const client = rangeLimitedClient(4n, answered);
    const verdict = await readChannel(client, channelId, undefined, { fromBlock: 0n, chunkBlocks: 4n });
    expect(verdict).toMatchObject({ type: 'found', channel: { receiver, balance: 10_000n } });
    // Consecutive ranges of at most four blocks from block 0, none skipped.
    expect(answered.length).toBeGreaterThan(3);
    expect(answered[0]![0]).toBe(0n);
    for (const [i, [from, to]] of answered.entries()) {
      expect(to - from + 1n).toBeLessThanOrEqual(4n);
      if (i > 0) expect(from).toBe(answered[i - 1]![1] + 1n);
    }
    expect(answered.at(-1)![1]).toBeGreaterThanOrEqual(created.blockNumber);
  });

  it('gives up for a retry when a range no wider than a chunk is refused', async () => {
    const verdict = await readChannel(rangeLimitedClient(4n, []), channelId, undefined, { fromBlock: 0n, chunkBlocks: 8n });
    expect(verdict).toMatchObject({ type: 'retry' });
  });
});
