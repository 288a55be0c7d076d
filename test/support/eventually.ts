import { parseGwei, type Address } from 'viem';
import { type LocalChain, type TestAccount, usdCoinAbi } from './chain';

/** What a failed wait adds to its message (e.g. the output of the processes under test). */
export interface EventuallyOptions {
  context?: () => string;
}

/**
 * The one way tests wait for work that runs on its own (background receipt waits, checks, other
 * processes): polls `read` until `accept` holds, else fails naming `what` after `ms`.
 */
export async function eventually<T>(
  read: () => Promise<T> | T,
  accept: (value: T) => boolean,
  what: string,
  ms = 10_000,
  options: EventuallyOptions = {},
): Promise<T> {
  for (const end = Date.now() + ms; ; await Bun.sleep(25)) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}${options.context ? `\n${options.context()}` : ''}`);
  }
}

/**
 * Like {@link eventually}, but answers the last reading when the time is up instead of failing:
 * the test then asserts on it, and its failure shows the value itself.
 */
export async function lastReading<T>(read: () => Promise<T> | T, accept: (value: T) => boolean, ms = 10_000): Promise<T> {
  try {
    return await eventually(read, accept, 'a reading', ms);
  } catch {
    return read();
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
