/**
 * The shared receipt poller of broadcast settlements: many transactions waiting for a block cost
 * one block-number read per poll, receipts are asked for only when a block appeared, and stopping
 * answers every waiter at once.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'bun:test';
import { createPublicClient, custom, http, type Hex, type PublicClient } from 'viem';
import { createReceiptWatcher } from '../../src/facilitator/receipts';
import { type LocalChain, startChain } from '../support/chain';
import { eventually } from '../support/eventually';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
}, 60_000);
afterAll(() => chain.stop());
afterEach(() => chain.testClient.setAutomine(true));

/** A client on the chain that counts its JSON-RPC requests by method. */
function countingClient(): { client: PublicClient; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const rpc = http(chain.rpcUrl)({});
  const client = createPublicClient({
    transport: custom({
      request: (args: { method: string; params?: unknown }) => {
        calls.set(args.method, (calls.get(args.method) ?? 0) + 1);
        return rpc.request(args);
      },
    }),
    cacheTime: 0,
  }) as PublicClient;
  return { client, calls };
}

async function sendUnmined(count: number): Promise<Hex[]> {
  await chain.testClient.setAutomine(false);
  const sender = chain.walletClient(chain.accounts.payer);
  const hashes: Hex[] = [];
  for (let i = 0; i < count; i++) hashes.push(await sender.sendTransaction({ to: chain.accounts.payee.address, value: 1n }));
  return hashes;
}

it('waits for many transactions with one block-number read per poll, and receipts only once a block appeared', async () => {
  const hashes = await sendUnmined(10);
  const { client, calls } = countingClient();
  const stop = new AbortController();
  const watcher = createReceiptWatcher(client, 20, stop.signal);
  const waits = hashes.map((hash) => watcher.wait(hash, 10_000));
  expect(watcher.watching).toBe(10);
  await eventually(
    () => calls.get('eth_blockNumber') ?? 0,
    (polls) => polls >= 15,
    'the watcher polls 15 times without a new block',
  );
  const receiptsBefore = calls.get('eth_getTransactionReceipt') ?? 0;
  expect(receiptsBefore).toBeLessThanOrEqual(10); // the first look only
  await chain.testClient.mine({ blocks: 1 });
  const receipts = await Promise.all(waits);
  expect(receipts.map((r) => r?.status)).toEqual(hashes.map(() => 'success'));
  expect((calls.get('eth_getTransactionReceipt') ?? 0) - receiptsBefore).toBeLessThanOrEqual(10);
  expect(watcher.watching).toBe(0);
  stop.abort();
});

it('answers undefined past a wait’s timeout, and to every waiter once stopped', async () => {
  const [a, b] = await sendUnmined(2);
  const { client } = countingClient();
  const stop = new AbortController();
  const watcher = createReceiptWatcher(client, 20, stop.signal);
  expect(await watcher.wait(a!, 100)).toBeUndefined();
  const pending = watcher.wait(b!, 60_000);
  stop.abort();
  expect(await pending).toBeUndefined();
  expect(await watcher.wait(b!, 60_000)).toBeUndefined(); // stopped: nothing is watched any more
  await chain.testClient.mine({ blocks: 1 });
});
