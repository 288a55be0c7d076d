import type { CallBody } from 'skill-market/registry';
import { AppError } from '../../../http';
import { priceToAtomic } from '../skills';
import { type ChannelCall, MAX_CHANNEL_AMOUNT } from './store';

/**
 * A call record paid over a channel, checked on its own: the channel id and the cumulative charge
 * come together and without a paymentRef; the call's own charge (`amountAtomic`, or the older
 * `amount` in whole tokens, converted with the token's `decimals`) is positive and at most the
 * cumulative charge, which fits a uint128. Answers the call, or why it is refused.
 */
export function channelCallOf(call: CallBody, skill: { id: string; network: string }, decimals: number): ChannelCall | string {
  if (call.channelId === undefined || call.chargedCumulativeAmount === undefined) {
    return 'Invalid request: a channel call needs both "channelId" and "chargedCumulativeAmount"';
  }
  if (call.paymentRef !== undefined) return 'Invalid request: a channel call has no "paymentRef"';
  if (call.amountAtomic === undefined && call.amount === undefined)
    return 'Invalid request: field "amountAtomic": a channel call needs its own charge';
  const field = call.amountAtomic !== undefined ? 'amountAtomic' : 'amount';
  let amount: bigint;
  try {
    amount = call.amountAtomic !== undefined ? BigInt(call.amountAtomic) : priceToAtomic(call.amount!, 'amount', decimals);
  } catch (error) {
    if (error instanceof AppError) return error.message;
    throw error;
  }
  const cumulative = BigInt(call.chargedCumulativeAmount);
  if (amount <= 0n) return `Invalid request: field "${field}": must be positive`;
  if (cumulative > MAX_CHANNEL_AMOUNT) return 'Invalid request: field "chargedCumulativeAmount": larger than a channel can hold (uint128)';
  if (amount > cumulative) {
    return `Invalid request: field "${field}": ${amount} atomic units is more than the channel's cumulative charge ${cumulative}`;
  }
  return { skillId: skill.id, network: skill.network, channelId: call.channelId.toLowerCase(), cumulative, amount };
}
