/**
 * A call record's signed receipt (x402/receipt.ts), as the registry checks it when recorded: it
 * must be signed by the skill's listed `receiptSigner`, for at most its price, naming the record's
 * payment and amount. Against the chain it is checked where the chain's amount is known: a payment
 * already checked at once, else when its check is decided (payment-verification/store.ts flags a
 * `mismatch`). Revenue is always what the chain shows; a receipt never adds to it.
 */
import type { CallBody, UsageBody } from 'skill-market/registry';
import { receiptProblem, rescaleAtomic, sameAddress, USDC_DECIMALS, type SignedSkillReceipt } from 'skill-market/x402';
import type { SkillFacts } from './skill-facts';

/**
 * Why the record's receipt is refused, or undefined when it holds (or the record has none, or the
 * skill lists no `receiptSigner`: the receipt is then ignored).
 * `amount` is the record's amount in the token's atomic units; `decimals` the token's.
 */
export async function receiptRefusal(
  call: CallBody | UsageBody,
  skill: SkillFacts,
  amount: bigint | null,
  decimals: number,
): Promise<string | undefined> {
  // A skill listing no signer (registered by an older SDK, or by hand): nothing to check against; counted from the chain.
  if (!call.receipt || !skill.receiptSigner) return undefined;
  const signed = call.receipt as SignedSkillReceipt;
  const price = rescaleAtomic(skill.priceAtomic, USDC_DECIMALS, decimals);
  const problem = await receiptProblem(signed, {
    signer: skill.receiptSigner,
    ...(price === undefined ? {} : { maxAmount: price }),
    ...(amount === null ? {} : { amount }),
    network: skill.network,
  });
  if (problem) return problem;
  const p = signed.payload;
  if (call.channelId !== undefined) {
    if (!sameAddress(p.transaction, call.channelId))
      return `the receipt names channel ${p.transaction}, not the record's ${call.channelId}`;
    if (p.cumulativeAmount !== call.chargedCumulativeAmount)
      return `the receipt cumulative charge ${p.cumulativeAmount} differs from the record's, ${call.chargedCumulativeAmount}`;
    return undefined;
  }
  if (call.paymentRef === undefined || p.transaction.toLowerCase() !== call.paymentRef.toLowerCase())
    return `the receipt names transaction ${p.transaction}, not the record's ${call.paymentRef ?? '(none)'}`;
  return undefined;
}

/** Why a receipt's amount is refused against what the chain shows the payment moved; undefined when they agree. */
export function chainRefusal(receiptAmount: bigint, chainAmount: bigint): string | undefined {
  return receiptAmount === chainAmount
    ? undefined
    : `the receipt amount ${receiptAmount} differs from what the chain shows paid, ${chainAmount}`;
}

/**
 * How a kept receipt stands against its payment's check: `pending` until the check decides,
 * `matches` or `mismatch` once the chain showed what the payment moved (`chainAmount`); null when
 * the check rejected the payment (nothing counts) or there is none.
 */
export function receiptCheckOf(
  receiptAmount: string,
  verification: 'none' | 'pending' | 'verified' | 'rejected',
  chainAmount: string | null,
): 'pending' | 'matches' | 'mismatch' | null {
  if (verification === 'pending') return 'pending';
  if (verification !== 'verified' || chainAmount === null) return null;
  return chainRefusal(BigInt(receiptAmount), BigInt(chainAmount)) === undefined ? 'matches' : 'mismatch';
}
