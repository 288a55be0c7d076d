/**
 * The buyer's check of a skill server's signed receipt (x402/receipt.ts): signed by the listing's
 * `receiptSigner`, for the body received, for at most the listed price and exactly what the
 * payment says was charged, by this wallet, naming this payment. A listing without a
 * `receiptSigner` (a server that signs none, e.g. the `@x402/hono` reference server) leaves a
 * receipt unchecked: there is nothing to check it against.
 */
import type { Answer } from '../http/exchange';
import type { Skill } from '../registry/read';
import { readReceiptHeader, receiptProblem, sameAddress, type SignedSkillReceipt } from '../x402/index';
import type { PaymentReceipt } from './types';

/**
 * What the buyer made of the receipt a paid answer carried: valid (kept with the payment and
 * sent with its usage record), or refused with the reason (the payment stands; the receipt is
 * kept for the record when it could be read).
 */
export type ReceiptCheck = { valid: true; receipt: SignedSkillReceipt } | { valid: false; reason: string; receipt?: SignedSkillReceipt };

/** How a call treats a refused receipt: `strict` throws ReceiptError (carrying the result), `flag` returns the result flagged. */
export type ReceiptMode = 'strict' | 'flag';

/**
 * The check of the receipt of `answer`, paid by `payment` under terms whose amount (the listed
 * price in the token's units; for `upto` the maximum) is `maxAmount`; undefined when it carries
 * none or the listing names no signer.
 */
export async function checkReceipt(
  answer: Answer,
  skill: Skill,
  payment: PaymentReceipt,
  maxAmount: bigint,
): Promise<ReceiptCheck | undefined> {
  const read = readReceiptHeader(answer.headers);
  const signer = skill.receiptSigner;
  if (!read || !signer) return undefined;
  if (read.type === 'error') return { valid: false, reason: read.reason };
  const signed = read.receipt;
  const p = signed.payload;
  const problem =
    (await receiptProblem(signed, {
      signer,
      body: answer.text,
      maxAmount,
      amount: BigInt(payment.amount),
      payer: payment.payer,
      network: payment.network,
    })) ?? referenceProblem(p.transaction, p.cumulativeAmount, payment);
  return problem ? { valid: false, reason: problem, receipt: signed } : { valid: true, receipt: signed };
}

/** Whether the receipt names this payment: its transaction, or its channel and cumulative charge. */
function referenceProblem(transaction: string, cumulative: string, payment: PaymentReceipt): string | undefined {
  if (payment.channelId) {
    if (!sameAddress(transaction, payment.channelId)) return `the receipt names channel ${transaction}, not ${payment.channelId}`;
    if (payment.chargedCumulativeAmount !== undefined && cumulative !== payment.chargedCumulativeAmount)
      return `the receipt cumulative charge ${cumulative} differs from the channel's, ${payment.chargedCumulativeAmount}`;
    return undefined;
  }
  if (payment.transaction && transaction.toLowerCase() !== payment.transaction.toLowerCase())
    return `the receipt names transaction ${transaction}, not ${payment.transaction}`;
  return undefined;
}
