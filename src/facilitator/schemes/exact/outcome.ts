/** What a mined transfer means for its authorization: settled only with the Transfer it should emit. */
import { parseEventLogs, type Address, type TransactionReceipt } from 'viem';
import { sameAddress } from 'skill-market/x402';
import { tokenAbi } from './chain';
import { REASONS } from './reasons';
import type { Outcome } from './store';

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
  const transfers = parseEventLogs({ abi: tokenAbi, eventName: 'Transfer', logs: receipt.logs });
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
