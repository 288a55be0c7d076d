/**
 * The errors of a paid call, on top of the SDK's base errors (sdk/http/errors.ts): refused input,
 * terms, limits, and a failed skill. Errors raised after a proof was sent ({@link PaidCallError})
 * say whether money moved (`charged`) and carry the receipt.
 */
import type { ValueProblem } from '../json-schema/index';
import { MarketError, type MarketErrorCode, type MarketErrorDetails } from '../http/errors';
import type { CallResult, PaymentReceipt } from './types';

/**
 * A paid call failed after its payment proof was sent: `charged` says whether money moved and
 * `receipt` is the settlement receipt when the server (or the chain) gave one. The base of
 * {@link SkillCallError}; also thrown with the codes `network_error`, `payment_pending`,
 * `invalid_response` when the answer to a sent proof is missing, pending or unreadable.
 *
 * @example
 * try {
 *   await market.call('translate', { text: 'hello' });
 * } catch (error) {
 *   if (error instanceof PaidCallError && error.charged !== 'no') console.log('paid', error.receipt?.transaction);
 *   else throw error;
 * }
 */
export class PaidCallError extends MarketError {
  override name = 'PaidCallError';
  /** The settlement receipt, when the server sent one with the error. */
  readonly receipt: PaymentReceipt | undefined;

  constructor(code: MarketErrorCode, message: string, details: MarketErrorDetails & { receipt?: PaymentReceipt } = {}) {
    super(code, message, { ...details, charged: details.charged ?? (details.receipt ? 'yes' : 'no') });
    this.receipt = details.receipt;
  }
}

/**
 * The input was refused before any request to the skill: `problems` lists every violation.
 *
 * @example
 * try {
 *   await market.call('word-count', { text: 42 });
 * } catch (error) {
 *   if (error instanceof InputValidationError) console.log(error.problems); // [{ path: '/text', message: 'must be string' }]
 *   else throw error;
 * }
 */
export class InputValidationError extends MarketError {
  override name = 'InputValidationError';
  constructor(
    readonly problems: ValueProblem[],
    slug: string,
  ) {
    const first = problems[0];
    super(
      'invalid_input',
      `Input refused by the inputSchema of ${slug}: ${first ? `${first.path} ${first.message}` : 'invalid'}${problems.length > 1 ? ` (+${problems.length - 1} more)` : ''}`,
      { slug },
    );
  }
}

/** Which term of a 402 answer disagreed with the listing. */
export type TermsField = 'scheme' | 'network' | 'payTo' | 'price' | 'asset' | 'maxTimeoutSeconds';

/**
 * The skill server asked for other terms than the registry lists; nothing was signed.
 *
 * @example
 * try {
 *   await market.call('weather-now', { city: 'Paris' });
 * } catch (error) {
 *   // e.g. the server asks for more than the listed price: nothing was signed
 *   if (error instanceof TermsMismatchError) console.log(error.field, error.expected, error.actual);
 *   else throw error;
 * }
 */
export class TermsMismatchError extends MarketError {
  override name = 'TermsMismatchError';
  constructor(
    readonly field: TermsField,
    readonly expected: string,
    readonly actual: string,
    slug: string,
    status = 402,
  ) {
    super('terms_mismatch', `Refused to pay ${slug}: the server asks for ${field} ${actual}, expected ${expected}`, { slug, status });
  }
}

/**
 * A spending limit refused the call before anything was signed. Amounts in atomic units.
 *
 * @example
 * try {
 *   await market.call('weather-now', { city: 'Paris' }, { maxPrice: '$0.001' });
 * } catch (error) {
 *   if (error instanceof SpendingLimitError) console.log(error.limit, formatPriceUsd(error.price), formatPriceUsd(error.allowed));
 *   else throw error;
 * }
 */
export class SpendingLimitError extends MarketError {
  override name = 'SpendingLimitError';
  constructor(
    readonly limit: 'maxPrice' | 'budget',
    readonly price: bigint,
    /** maxPrice, or the budget's remaining amount. */
    readonly allowed: bigint,
    slug: string,
    message: string,
  ) {
    super(limit === 'maxPrice' ? 'max_price_exceeded' : 'budget_exceeded', message, { slug });
  }
}

/**
 * The skill's handler failed; `message` is the skill's own error text.
 *
 * @example
 * try {
 *   await market.call('translate', { text: 'hello', to: 'xx' });
 * } catch (error) {
 *   // code 'skill_failed', 'skill_timeout' or 'skill_error'; `charged` says whether the call was paid
 *   if (error instanceof SkillCallError) console.log(error.code, error.message, error.charged);
 *   else throw error;
 * }
 */
export class SkillCallError extends PaidCallError {
  override name = 'SkillCallError';
}

/**
 * A paid answer whose signed receipt was refused (`receipt_invalid`): a receipt by another key
 * than the listing's `receiptSigner`, for another amount, body, payer or payment. The payment
 * happened (`charged: 'yes'`); the result is kept here, with `result.receipt.signed` saying why.
 *
 * @example
 * try {
 *   await market.call('translate', { text: 'hello' });
 * } catch (error) {
 *   if (error instanceof ReceiptError) console.log(error.reason, error.result.result); // the answer is not lost
 *   else throw error;
 * }
 */
export class ReceiptError extends PaidCallError {
  override name = 'ReceiptError';
  /** The call's result, with its payment and the refused receipt (`result.receipt.signed`). */
  readonly result: CallResult;
  /** Why the receipt was refused. */
  readonly reason: string;

  constructor(slug: string, reason: string, result: CallResult, answer: { status: number; text: string }) {
    super('receipt_invalid', `${slug}: receipt refused: ${reason}`, {
      slug,
      status: answer.status,
      body: answer.text,
      charged: 'yes',
      ...(result.receipt ? { receipt: result.receipt } : {}),
    });
    this.result = result;
    this.reason = reason;
  }
}
