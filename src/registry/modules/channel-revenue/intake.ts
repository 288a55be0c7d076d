import type { CallBody } from 'skill-market/registry';
import { AppError } from '../../../http';
import { priceToAtomic } from '../skills';
import { type ChannelCall, MAX_CHANNEL_AMOUNT } from './store';

/**
 * A call record paid over a channel, checked on its own: the channel id and the cumulative charge
 * come together and without a paymentRef; the call's own charge (`amount`, USDC) is positive and at
 * most the cumulative charge, which fits a uint128. Answers the call, or why it is refused.
 */
export function channelCallOf(call: CallBody, skill: { id: string; network: string }): ChannelCall | string {
  if (call.channelId === undefined || call.chargedCumulativeAmount === undefined) {
    return 'Invalid request: a channel call needs both "channelId" and "chargedCumulativeAmount"';
  }
  if (call.paymentRef !== undefined) return 'Invalid request: a channel call has no "paymentRef"';
  if (call.amount === undefined) return 'Invalid request: field "amount": a channel call needs its own charge';
  let amount: bigint;
  try {
    amount = priceToAtomic(call.amount);
  } catch (error) {
    if (error instanceof AppError) return error.message.replace('"price"', '"amount"');
    throw error;
  }
  const cumulative = BigInt(call.chargedCumulativeAmount);
  if (amount <= 0n) return 'Invalid request: field "amount": must be positive';
  if (cumulative > MAX_CHANNEL_AMOUNT) return 'Invalid request: field "chargedCumulativeAmount": larger than a channel can hold (uint128)';
  if (amount > cumulative) {
    return `Invalid request: field "amount": ${amount} atomic units is more than the channel's cumulative charge ${cumulative}`;
  }
  return { skillId: skill.id, network: skill.network, channelId: call.channelId.toLowerCase(), cumulative, amount };
}
