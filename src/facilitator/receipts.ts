import {
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  parseEventLogs,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { sameAddress } from 'skill-market/x402';
import { eip3009Abi } from './chain';
import { REASONS } from './reasons';
import type { Outcome } from './store';

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

/** The transfer a settlement must produce. */
export interface ExpectedTransfer {
  asset: Address;
  from: Address;
  to: Address;
  value: bigint;
}

/** What a mined receipt means: confirmed with the expected Transfer event, or failed. */
export function outcomeOf(receipt: TransactionReceipt, expected: ExpectedTransfer): Outcome {
  const blockNumber = Number(receipt.blockNumber);
  if (receipt.status !== 'success') {
    return {
      status: 'reverted',
      blockNumber,
      error: 'The transaction reverted',
      authorization: { state: 'failed', reason: REASONS.transactionFailed },
    };
  }
  const transfers = parseEventLogs({ abi: eip3009Abi, eventName: 'Transfer', logs: receipt.logs });
  const paid = transfers.some(
    (log) =>
      sameAddress(log.address, expected.asset) &&
      sameAddress(log.args.from, expected.from) &&
      sameAddress(log.args.to, expected.to) &&
      log.args.value === expected.value,
  );
  if (!paid) {
    return {
      status: 'confirmed',
      blockNumber,
      error: 'Mined without the expected Transfer event',
      authorization: { state: 'failed', reason: REASONS.transferEventMismatch },
    };
  }
  return { status: 'confirmed', blockNumber, authorization: { state: 'settled' } };
}
