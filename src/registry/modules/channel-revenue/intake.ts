import type { CallBody, UsageBody } from 'skill-market/registry';
import { isCaip2Network, parseCaip2, rescaleAtomic, USDC_DECIMALS, voucherDigest } from 'skill-market/x402';
import { AppError } from '../../../http';
import { type CountFloor, countablePrice, priceToAtomic } from '../skills';
import { type ChannelCall, MAX_CHANNEL_AMOUNT } from './store';

/** The channel fields a call record and a usage record share. */
type ChannelFields = Pick<CallBody, 'channelId' | 'chargedCumulativeAmount' | 'paymentRef'>;

/**
 * The channel and cumulative charge of a record paid over a channel, or why they are refused: they
 * come together and without a paymentRef; the call's own charge `amount` (named `field` in the
 * record) is positive and at most the cumulative charge, which fits a uint128.
 */
function channelCharge(record: ChannelFields, amount: bigint, field: string): { channelId: `0x${string}`; cumulative: bigint } | string {
  if (record.channelId === undefined || record.chargedCumulativeAmount === undefined) {
    return 'Invalid request: a channel call needs both "channelId" and "chargedCumulativeAmount"';
  }
  if (record.paymentRef !== undefined) return 'Invalid request: a channel call has no "paymentRef"';
  const cumulative = BigInt(record.chargedCumulativeAmount);
  if (amount <= 0n) return `Invalid request: field "${field}": must be positive`;
  if (cumulative > MAX_CHANNEL_AMOUNT) return 'Invalid request: field "chargedCumulativeAmount": larger than a channel can hold (uint128)';
  if (amount > cumulative) {
    return `Invalid request: field "${field}": ${amount} atomic units is more than the channel's cumulative charge ${cumulative}`;
  }
  return { channelId: record.channelId.toLowerCase() as `0x${string}`, cumulative };
}

/**
 * A call record paid over a channel, checked on its own (see {@link channelCharge}); its own charge
 * is `amountAtomic`, or the older `amount` in whole tokens, converted with the token's `decimals`,
 * and must be at least what a call of the skill pays to count now (its price, or the price before a
 * recent cut: skills/count-floor.ts; with volume prices, its lowest step). Answers the call (with the digest of the payer's voucher for
 * that cumulative charge, which older consumer clients named the call by), or why it is refused.
 */
export function channelCallOf(
  call: CallBody,
  skill: { id: string; network: string; tiers?: { steps: { priceAtomic: string }[] } | null } & CountFloor,
  decimals: number,
  now: Date,
): ChannelCall | string {
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
  const charge = channelCharge(call, amount, field);
  if (typeof charge === 'string') return charge;
  // A skill with volume prices charges its steady payers its lowest listed step: that counts too.
  const lowest = skill.tiers?.steps.reduce(
    (low, step) => (BigInt(step.priceAtomic) < low ? BigInt(step.priceAtomic) : low),
    countablePrice(skill, now),
  );
  const least = rescaleAtomic(lowest ?? countablePrice(skill, now), USDC_DECIMALS, decimals);
  if (least !== undefined && amount < least) {
    return `Invalid request: field "${field}": a charge of ${amount} atomic units is under the ${least} a call of this skill pays to count (its price, or for a day after a price cut the price before it)`;
  }
  const { channelId, cumulative } = charge;
  const digest = isCaip2Network(skill.network) ? voucherDigest(channelId, cumulative, parseCaip2(skill.network)) : null;
  return { skillId: skill.id, network: skill.network, channelId, cumulative, amount, voucherDigest: digest };
}

/** A consumer's usage record of a call paid over a channel, as stored. */
export interface ChannelUsage {
  channelId: string;
  cumulative: bigint;
  depositTransaction: string | null;
  depositAmount: bigint | null;
}

/**
 * The channel part of a consumer's usage record (`amount`: its charge in atomic units): none for a
 * transfer; the channel, the cumulative charge and the deposit the call made, checked as a
 * skill server's record is.
 *
 * @throws AppError VALIDATION naming the field
 */
export function channelUsageOf(input: UsageBody, amount: bigint): ChannelUsage | undefined {
  const channel = input.channelId !== undefined || input.chargedCumulativeAmount !== undefined;
  if (!channel) {
    if (input.depositTransaction !== undefined || input.depositAmountAtomic !== undefined)
      throw new AppError('VALIDATION', 'Invalid request: field "depositTransaction": a deposit is named only with its "channelId"');
    return undefined;
  }
  const field = input.amountAtomic !== undefined ? 'amountAtomic' : 'amount';
  const charge = channelCharge(input, amount, field);
  if (typeof charge === 'string') throw new AppError('VALIDATION', charge);
  if (input.depositAmountAtomic !== undefined && input.depositTransaction === undefined)
    throw new AppError('VALIDATION', 'Invalid request: field "depositAmountAtomic": comes with its "depositTransaction"');
  if (input.depositAmountAtomic !== undefined && BigInt(input.depositAmountAtomic) > MAX_CHANNEL_AMOUNT)
    throw new AppError('VALIDATION', 'Invalid request: field "depositAmountAtomic": larger than a channel can hold (uint128)');
  return {
    channelId: charge.channelId,
    cumulative: charge.cumulative,
    depositTransaction: input.depositTransaction?.toLowerCase() ?? null,
    depositAmount: input.depositAmountAtomic === undefined ? null : BigInt(input.depositAmountAtomic),
  };
}
