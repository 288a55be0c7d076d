import { parseGwei, type Address } from 'viem';
import { type LocalChain, type TestAccount, usdCoinAbi } from './chain';

/** Polls `read` until `accept` holds, for work that runs on its own (background receipt waits, checks). */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; ; await Bun.sleep(25)) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
  }
}

/**
 * The payer sends `amount` away with a high tip while automining is off, then one block is mined:
 * their transfer goes first, so a settlement of theirs waiting in the same block reverts.
 */
export async function drainFirst(chain: LocalChain, payer: TestAccount, to: Address, amount: bigint): Promise<void> {
  await chain.walletClient(payer).writeContract({
    address: chain.token.address,
    abi: usdCoinAbi,
    functionName: 'transfer',
    args: [to, amount],
    maxPriorityFeePerGas: parseGwei('50'),
    maxFeePerGas: parseGwei('200'),
    gas: 100_000n,
  });
  await chain.testClient.mine({ blocks: 1 });
  await chain.testClient.setAutomine(true);
}
