import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Hex, type PublicClient, type TransactionReceipt } from 'viem';

/**
 * Polls for a transaction's receipt until `timeoutMs` has passed; undefined when none was seen in
 * time. The first look is immediate and early retries come quickly (5 ms, doubling up to
 * `pollMs`): fast chains often mine within milliseconds. RPC failures count as "not seen yet".
 * An aborted `signal` ends the wait at the next look (the reconciler finishes the job).
 */
export async function waitForReceipt(
  client: PublicClient,
  hash: Hex,
  timeoutMs: number,
  pollMs: number,
  signal?: AbortSignal,
): Promise<TransactionReceipt | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (let delay = Math.min(5, pollMs); ; delay = Math.min(delay * 2, pollMs)) {
    const receipt = await findReceipt(client, hash).catch(() => undefined);
    if (receipt) return receipt;
    const left = deadline - performance.now();
    if (left <= 0 || signal?.aborted) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
  }
}

/** The receipt, or undefined while the transaction is not mined (other RPC errors throw). */
export async function findReceipt(client: PublicClient, hash: Hex): Promise<TransactionReceipt | undefined> {
  try {
    return await client.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return undefined;
    throw error;
  }
}

/** True while the node still knows the transaction (e.g. in its mempool). */
export async function isKnownTransaction(client: PublicClient, hash: Hex): Promise<boolean> {
  try {
    await client.getTransaction({ hash });
    return true;
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return false;
    throw error;
  }
}

/** Waits for many receipts at once: what broadcast settlements await after their answer. */
export interface ReceiptWatcher {
  /** The receipt once mined; undefined after `timeoutMs` or once the watcher stops. */
  wait(hash: Hex, timeoutMs: number): Promise<TransactionReceipt | undefined>;
  /** Transactions being watched. */
  readonly watching: number;
}

/**
 * One poller for every watched transaction: it reads the block number every `pollMs` and looks
 * for the receipts only when a new block appeared, so a thousand transactions waiting for one
 * block cost one `eth_blockNumber` per poll, not a thousand receipt requests. Stops (answering
 * undefined to every waiter) when `signal` aborts.
 */
export function createReceiptWatcher(client: PublicClient, pollMs: number, signal: AbortSignal): ReceiptWatcher {
  const waiting = new Map<Hex, { deadline: number; done: (receipt: TransactionReceipt | undefined) => void }[]>();
  let lastBlock: bigint | undefined;
  let running = false;

  const settle = (hash: Hex, receipt: TransactionReceipt | undefined) => {
    for (const waiter of waiting.get(hash) ?? []) waiter.done(receipt);
    waiting.delete(hash);
  };

  const pass = async () => {
    const block = await client.getBlockNumber({ cacheTime: 0 }).catch(() => undefined);
    if (block !== undefined && block !== lastBlock) {
      lastBlock = block;
      const hashes = [...waiting.keys()];
      for (let i = 0; i < hashes.length; i += 32) {
        await Promise.all(
          hashes.slice(i, i + 32).map(async (hash) => {
            const receipt = await findReceipt(client, hash).catch(() => undefined);
            if (receipt) settle(hash, receipt);
          }),
        );
      }
    }
    const now = performance.now();
    for (const [hash, waiters] of waiting) {
      const left = waiters.filter((w) => w.deadline > now);
      for (const w of waiters) if (w.deadline <= now) w.done(undefined);
      if (left.length === 0) waiting.delete(hash);
      else waiting.set(hash, left);
    }
  };

  const loop = async () => {
    if (running) return;
    running = true;
    try {
      while (waiting.size > 0 && !signal.aborted) {
        await pass();
        if (waiting.size > 0 && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    } finally {
      running = false;
      if (signal.aborted) for (const hash of [...waiting.keys()]) settle(hash, undefined);
    }
  };

  return {
    wait(hash, timeoutMs) {
      if (signal.aborted) return Promise.resolve(undefined);
      return new Promise((done) => {
        const waiters = waiting.get(hash) ?? [];
        waiters.push({ deadline: performance.now() + timeoutMs, done });
        waiting.set(hash, waiters);
        lastBlock = undefined; // a new transaction: look once even if no block is new
        void loop();
      });
    },
    get watching() {
      return waiting.size;
    },
  };
}
