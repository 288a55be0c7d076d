/** What a paid call adds to the payer's history in the registry (`POST /analytics/usage`). */
import type { PaymentReceipt } from '../payment/types';
import type { UsageBody } from '../registry/contract/index';

/**
 * The usage record of a paid call's receipt, for the caller's history: a transfer (`exact`) names
 * its transaction (or, without one, its authorization nonce) for the registry to check on chain; a
 * call paid over a payment channel (`batch-settlement`) names the channel and its cumulative charge
 * after the call, and the channel deposit the call made, if any: a voucher is no transfer, and a
 * deposit is no payment to the skill. Undefined for a channel receipt that does not say its charge,
 * and for a call charged nothing.
 *
 * @example
 * const { receipt } = await market.callWithReceipt('weather-now', { city: 'Paris' });
 * const record = receipt && usageRecordOf(receipt);
 * if (record) await registry.recordUsage(record);
 */
export function usageRecordOf(receipt: PaymentReceipt): UsageBody | undefined {
  // A call its server charged nothing for paid nothing.
  if (receipt.amount === '0') return undefined;
  const base = { skillId: receipt.skillId, amountAtomic: receipt.amount };
  if (receipt.scheme !== 'batch-settlement') return { ...base, paymentRef: receipt.transaction ?? receipt.nonce };
  if (!receipt.channelId || !receipt.chargedCumulativeAmount) return undefined;
  return {
    ...base,
    channelId: receipt.channelId,
    chargedCumulativeAmount: receipt.chargedCumulativeAmount,
    ...(receipt.deposit && receipt.transaction ? { depositTransaction: receipt.transaction, depositAmountAtomic: receipt.deposit } : {}),
  };
}
