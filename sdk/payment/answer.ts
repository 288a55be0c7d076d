/**
 * What a skill server's answer means for the caller: the handler's result (unwrapped from
 * `{success, result, timestamp}`), the receipt of the payment, or a typed error saying whether
 * money moved, and the reason a server gives for an error answer.
 */
import type { ChargeState } from '../http/errors';
import { isRecord, parseJson, type Answer } from '../http/exchange';
import type { Skill } from '../registry/read';
import { decodePaymentRequired, PAYMENT_REQUIRED_HEADER, readSettleResponseHeader, type Hex } from '../x402/index';
import { PaidCallError, SkillCallError } from './errors';
import type { SignedPayment } from './scheme';
import type { PaymentReceipt } from './types';

/** The receipt of a sent payment, with the transaction that settled it when known. */
export function paymentReceipt(
  skill: Skill,
  payment: SignedPayment,
  transaction: Hex | null,
  confirmed?: string,
  charged?: string,
): PaymentReceipt {
  const { requirements } = payment;
  const cumulative = confirmed ?? payment.cumulative;
  return {
    skillId: skill.id,
    slug: skill.slug,
    transaction,
    amount: charged ?? requirements.amount,
    price: skill.price,
    ...(skill.usageBased ? { usageBased: true as const } : {}),
    payTo: requirements.payTo,
    network: requirements.network,
    asset: requirements.asset,
    payer: payment.payer,
    nonce: payment.reference,
    scheme: requirements.scheme,
    ...(payment.channelId ? { channelId: payment.channelId } : {}),
    ...(cumulative === undefined ? {} : { chargedCumulativeAmount: cumulative }),
    ...(payment.deposit === undefined ? {} : { deposit: payment.deposit }),
  };
}

/**
 * The reason a server gives for an error answer: the `error` of the x402 v2 `PAYMENT-REQUIRED`
 * header (reference v2 servers answer a refused proof with an empty body), else the `errorReason`
 * of a failed settlement receipt (`PAYMENT-RESPONSE` with `success: false`), else the `error` (or
 * `message`) of the JSON body, as x402 v1 (`{x402Version: 1, error, accepts}`) and the interface
 * spec send it.
 *
 * @example
 * const answer = { status: response.status, headers: response.headers, text: await response.text() };
 * if (answer.status >= 400) console.log(`the skill refused: ${reasonOf(answer) ?? answer.status}`);
 */
export function reasonOf(answer: Answer): string | undefined {
  return (headerReason(answer) ?? failedSettlementOf(answer)?.reason ?? bodyReason(answer))?.slice(0, 500);
}

/** A failed settlement receipt (`PAYMENT-RESPONSE` with `success: false`) and its `errorReason`, if the answer has one. */
export function failedSettlementOf(answer: Answer): { reason: string | undefined } | undefined {
  const read = readSettleResponseHeader(answer.headers);
  if (read.type !== 'receipt' || read.receipt.success) return undefined;
  return { reason: read.receipt.errorReason || undefined };
}

function headerReason(answer: Answer): string | undefined {
  const header = answer.headers.get(PAYMENT_REQUIRED_HEADER);
  if (header === null) return undefined;
  try {
    const { error } = decodePaymentRequired(header);
    return error === undefined || error === '' ? undefined : error;
  } catch {
    return undefined; // an unreadable header: the body may still say why
  }
}

function bodyReason(answer: Answer): string | undefined {
  const parsed = parseJson(answer.text);
  if (!parsed.ok || !isRecord(parsed.value)) return undefined;
  const { error, message } = parsed.value;
  return typeof error === 'string' ? error : typeof message === 'string' ? message : undefined;
}

/**
 * The handler's result of a 2xx answer: `result` of the documented success body, otherwise the
 * whole JSON body (reference x402 servers pass the handler's own JSON through), otherwise the text
 * when the server did not claim JSON.
 *
 * @throws SkillCallError for `{success: false}`; PaidCallError('invalid_response') for broken JSON
 *
 * @example
 * const paid = await fetch(skill.endpoint, { method: 'POST', headers: { 'PAYMENT-SIGNATURE': proof }, body });
 * const answer = { status: paid.status, headers: paid.headers, text: await paid.text() };
 * if (paid.ok) console.log(resultOf(answer, skill.slug, 'yes', undefined)); // the handler's result
 */
export function resultOf(answer: Answer, slug: string, charged: ChargeState, receipt: PaymentReceipt | undefined): unknown {
  const type = answer.headers.get('content-type') ?? '';
  const parsed = parseJson(answer.text);
  if (!parsed.ok) {
    if (!type.includes('json') && type !== '') return answer.text;
    throw new PaidCallError(
      'invalid_response',
      `${slug} answered ${answer.status} with a body that is not JSON`,
      withReceipt({ status: answer.status, body: answer.text, slug, charged }, receipt),
    );
  }
  const body = parsed.value;
  if (isRecord(body) && body.success === true && Object.hasOwn(body, 'result')) return body.result;
  if (isRecord(body) && body.success === false) {
    const reason = typeof body.error === 'string' ? body.error.slice(0, 500) : 'the skill failed';
    throw new SkillCallError('skill_failed', reason, withReceipt({ status: answer.status, body: answer.text, slug, charged }, receipt));
  }
  return body;
}

/** The error of a non-2xx, non-402 answer from a skill server; `explain` adds what to do about the paying scheme's reason. */
export function failureOf(
  answer: Answer,
  slug: string,
  charged: ChargeState,
  receipt: PaymentReceipt | undefined,
  explain?: (reason: string) => string | undefined,
): PaidCallError {
  const details = withReceipt({ status: answer.status, body: answer.text, slug, charged }, receipt);
  const given = reasonOf(answer);
  const fix = given === undefined ? undefined : explain?.(given);
  const reason = fix ? `${given} (${fix})` : given;
  if (answer.status === 504)
    return new SkillCallError('skill_timeout', reason ? `${slug} timed out: ${reason}` : `${slug} timed out (504)`, details);
  const parsed = parseJson(answer.text);
  if (answer.status >= 500 && parsed.ok && isRecord(parsed.value) && parsed.value.success === false && reason !== undefined) {
    return new SkillCallError('skill_failed', reason, details);
  }
  return new SkillCallError('skill_error', `${slug} answered ${answer.status}${reason ? `: ${reason}` : ''}`, details);
}

function withReceipt<T extends object>(details: T, receipt: PaymentReceipt | undefined): T & { receipt?: PaymentReceipt } {
  return receipt ? { ...details, receipt } : details;
}
