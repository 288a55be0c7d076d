import { decodeEventLog, erc20Abi, type Address, type Hash, type Hex, type PublicClient } from 'viem';
import { PAYMENT_REVERTED_REASON } from 'skill-market/registry';
import { eip3009Abi } from 'skill-market/x402';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '../../../chain/batch-settlement';
import { UPTO_PROXY_ADDRESS, uptoProxyAbi } from '../../../chain/upto';

const tokenEvents = [...erc20Abi, ...eip3009Abi] as const;

/** Why a check waits: the chain knows no transaction of that hash (yet). */
export const TRANSACTION_NOT_FOUND = 'transaction not found on chain';

/** What the skill's listing says a payment for it must be. */
export interface ExpectedPayment {
  txHash: Hash;
  /** The EIP-3009 authorization nonce of the payment, naming one transfer of a batch; none for a bare transaction. */
  nonce?: Hex | undefined;
  asset: Address;
  payTo: Address;
  amount: bigint;
}

/** One transfer of the listed asset to the skill's address of exactly its price. */
interface PaymentTransfer {
  payer: Address;
  logIndex: number;
}

export type ChainVerdict =
  /** `transfers`: the transfers the report may be counted as, in log order (one when a nonce names it). */
  | { type: 'verified'; transfers: PaymentTransfer[]; amount: bigint; blockNumber: bigint; scheme: 'exact' | 'upto' }
  | { type: 'rejected'; reason: string }
  /**
   * Not a payment to the skill but a deposit into a payment channel (x402 `batch-settlement`), as
   * an older consumer client reported it: the channel and what the deposit put in, when its
   * `Deposited` event says.
   */
  | { type: 'channel-deposit'; channelId: Hex | null; amount: bigint | null }
  /** Not decidable yet: the transaction is not (yet) known, or the RPC failed. */
  | { type: 'retry'; reason: string };

/**
 * Reads the transaction's receipt: it must have succeeded and hold `Transfer` logs emitted by the
 * asset contract to `payTo` of exactly `amount`; each such log is one payment (a batch holds many).
 * A usage-based payment (x402 `upto`: the upto proxy moves what the payer signed through Permit2,
 * then logs `Settled`) counts for what it moved, more than nothing and at most `amount` (the listed
 * price is its maximum): the transfer to `payTo` just before the proxy's log. With a nonce, the payment is the transfer that follows the token's `AuthorizationUsed(payer,
 * nonce)` from that payer. Other transfers in the same transaction are ignored; a reverted one
 * moved nothing (the payer was not charged). A receipt is final, so anything but a missing receipt
 * or an RPC failure decides for good.
 */
export async function checkPaymentOnChain(client: PublicClient, expected: ExpectedPayment): Promise<ChainVerdict> {
  let receipt: Awaited<ReturnType<PublicClient['getTransactionReceipt']>>;
  try {
    receipt = await client.getTransactionReceipt({ hash: expected.txHash });
  } catch (error) {
    const names = errorNames(error);
    if (names.has('TransactionReceiptNotFoundError')) return { type: 'retry', reason: TRANSACTION_NOT_FOUND };
    return { type: 'retry', reason: names.has('TimeoutError') ? 'the RPC did not answer in time' : 'the RPC could not be read' };
  }
  if (receipt.status !== 'success') return { type: 'rejected', reason: PAYMENT_REVERTED_REASON };
  const events = receipt.logs.flatMap((log) => {
    if (log.address.toLowerCase() !== expected.asset.toLowerCase()) return [];
    try {
      return [{ event: decodeEventLog({ abi: tokenEvents, data: log.data, topics: log.topics }), logIndex: log.logIndex }];
    } catch {
      return [];
    }
  });
  const transfers = events.flatMap(({ event, logIndex }) => (event.eventName === 'Transfer' ? [{ ...event.args, logIndex }] : []));
  if (transfers.length === 0) return { type: 'rejected', reason: `no transfer of the listed asset ${expected.asset}` };
  let candidates = transfers;
  if (expected.nonce) {
    const nonce = expected.nonce.toLowerCase();
    const used = events.find(({ event }) => event.eventName === 'AuthorizationUsed' && event.args.nonce.toLowerCase() === nonce);
    if (used?.event.eventName !== 'AuthorizationUsed')
      return { type: 'rejected', reason: `the transaction uses no authorization with nonce ${expected.nonce}` };
    const authorizer = used.event.args.authorizer.toLowerCase();
    const own = transfers.find((t) => t.logIndex > used.logIndex && t.from.toLowerCase() === authorizer);
    if (!own) return { type: 'rejected', reason: `the authorization with nonce ${expected.nonce} moved no ${expected.asset}` };
    candidates = [own];
  }
  const toPayee = candidates.filter((t) => t.to.toLowerCase() === expected.payTo.toLowerCase());
  if (toPayee.length === 0 && candidates.some((t) => t.to.toLowerCase() === ERC3009_DEPOSIT_COLLECTOR_ADDRESS.toLowerCase()))
    return { type: 'channel-deposit', ...depositOf(receipt.logs) };
  if (toPayee.length === 0)
    return { type: 'rejected', reason: `the transfer goes to ${candidates[0]!.to}, not the skill's payment address ${expected.payTo}` };
  // An upto settlement first: one that charged the whole price is still upto (its scheme split says so).
  const charged = expected.nonce ? undefined : uptoCharge(receipt.logs, transfers, expected);
  if (charged)
    return {
      type: 'verified',
      transfers: [{ payer: charged.from, logIndex: charged.logIndex }],
      amount: charged.value,
      blockNumber: receipt.blockNumber,
      scheme: 'upto',
    };
  const exact = toPayee.filter((t) => t.value === expected.amount);
  if (exact.length > 0)
    return {
      type: 'verified',
      transfers: exact.map((t) => ({ payer: t.from, logIndex: t.logIndex })),
      amount: expected.amount,
      blockNumber: receipt.blockNumber,
      scheme: 'exact',
    };
  return { type: 'rejected', reason: `the transfer is ${toPayee[0]!.value} atomic units, the listed price is ${expected.amount}` };
}

/**
 * The transfer an upto settlement made to `payTo`: for each `Settled` (or `SettledWithPermit`) log
 * of the upto proxy, the token transfer right before it, when it pays `payTo` more than nothing and
 * at most the listed price.
 */
function uptoCharge(
  logs: readonly { address: string; data: Hex; topics: [] | [Hex, ...Hex[]]; logIndex: number }[],
  transfers: readonly { to: Address; value: bigint; from: Address; logIndex: number }[],
  expected: ExpectedPayment,
): { from: Address; value: bigint; logIndex: number } | undefined {
  for (const log of logs) {
    if (log.address.toLowerCase() !== UPTO_PROXY_ADDRESS.toLowerCase()) continue;
    try {
      decodeEventLog({ abi: uptoProxyAbi, data: log.data, topics: log.topics });
    } catch {
      continue; // not one of the proxy's events
    }
    const moved = transfers.filter((t) => t.logIndex < log.logIndex).at(-1);
    if (moved && moved.to.toLowerCase() === expected.payTo.toLowerCase() && moved.value > 0n && moved.value <= expected.amount)
      return moved;
  }
  return undefined;
}

/** The channel a deposit transaction's `Deposited` event credits, and how much (nulls without one). */
function depositOf(logs: readonly { address: string; data: Hex; topics: [] | [Hex, ...Hex[]] }[]): {
  channelId: Hex | null;
  amount: bigint | null;
} {
  for (const log of logs) {
    if (log.address.toLowerCase() !== BATCH_SETTLEMENT_ADDRESS.toLowerCase()) continue;
    try {
      const event = decodeEventLog({ abi: batchSettlementAbi, data: log.data, topics: log.topics });
      if (event.eventName === 'Deposited') return { channelId: event.args.channelId, amount: event.args.amount };
    } catch {
      // another event of the contract
    }
  }
  return { channelId: null, amount: null };
}

function errorNames(error: unknown): Set<string> {
  const names = new Set<string>();
  for (let e = error as { name?: string; cause?: unknown } | undefined, depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (typeof e.name === 'string') names.add(e.name);
  }
  return names;
}
