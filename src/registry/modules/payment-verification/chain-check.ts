import { decodeEventLog, parseAbi, type Address, type Hash, type PublicClient } from 'viem';
import { PAYMENT_REVERTED_REASON } from 'skill-market/registry';

const transferEvent = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);

/** What the skill's listing says a payment for it must be. */
export interface ExpectedPayment {
  txHash: Hash;
  asset: Address;
  payTo: Address;
  amount: bigint;
}

export type ChainVerdict =
  | { type: 'verified'; payer: Address; amount: bigint; blockNumber: bigint }
  | { type: 'rejected'; reason: string }
  /** Not decidable yet: the transaction is not (yet) known, or the RPC failed. */
  | { type: 'retry'; reason: string };

/**
 * Reads the transaction's receipt: it must have succeeded and hold a `Transfer` log emitted by
 * the asset contract to `payTo` of exactly `amount`. Other transfers in the same transaction
 * (batches) are ignored; a reverted one moved nothing (the payer was not charged). A receipt is final, so anything but a missing receipt or an RPC
 * failure decides for good.
 */
export async function checkPaymentOnChain(client: PublicClient, expected: ExpectedPayment): Promise<ChainVerdict> {
  let receipt: Awaited<ReturnType<PublicClient['getTransactionReceipt']>>;
  try {
    receipt = await client.getTransactionReceipt({ hash: expected.txHash });
  } catch (error) {
    const names = errorNames(error);
    if (names.has('TransactionReceiptNotFoundError')) return { type: 'retry', reason: 'transaction not found on chain' };
    return { type: 'retry', reason: names.has('TimeoutError') ? 'the RPC did not answer in time' : 'the RPC could not be read' };
  }
  if (receipt.status !== 'success') return { type: 'rejected', reason: PAYMENT_REVERTED_REASON };
  const transfers = receipt.logs.flatMap((log) => {
    if (log.address.toLowerCase() !== expected.asset.toLowerCase()) return [];
    try {
      const event = decodeEventLog({ abi: transferEvent, data: log.data, topics: log.topics });
      return event.eventName === 'Transfer' ? [event.args] : [];
    } catch {
      return [];
    }
  });
  if (transfers.length === 0) return { type: 'rejected', reason: `no transfer of the listed asset ${expected.asset}` };
  const toPayee = transfers.filter((t) => t.to.toLowerCase() === expected.payTo.toLowerCase());
  if (toPayee.length === 0)
    return { type: 'rejected', reason: `the transfer goes to ${transfers[0]!.to}, not the skill's payment address ${expected.payTo}` };
  const exact = toPayee.find((t) => t.value === expected.amount);
  if (!exact)
    return { type: 'rejected', reason: `the transfer is ${toPayee[0]!.value} atomic units, the listed price is ${expected.amount}` };
  return { type: 'verified', payer: exact.from, amount: exact.value, blockNumber: receipt.blockNumber };
}

function errorNames(error: unknown): Set<string> {
  const names = new Set<string>();
  for (let e = error as { name?: string; cause?: unknown } | undefined, depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (typeof e.name === 'string') names.add(e.name);
  }
  return names;
}
