/**
 * The body of `POST /analytics/usage` as the route validates it: the contract's union of two shapes
 * (our consumer's {@link UsageBody}, another SDK's {@link ReportedPayment}), with an error that
 * names the field and the form it must have in the shape the client meant (told apart by
 * `skillSlug`, as the route does) instead of the union's "should be one of 'object', 'object'".
 */
import type { TSchema } from '@sinclair/typebox';
import { Value, type ValueError } from '@sinclair/typebox/value';
import { MAX_USAGE_AMOUNT, ReportedPayment, UsageBody, UsageRequest } from 'skill-market/registry';

/** What each field must be, as a client is told it. */
const REPORTED_FORMS: Record<string, string> = {
  skillSlug: 'the skill’s slug, a string of 1 to 120 characters',
  consumerAddress: 'the payer’s address, "0x" and 40 hex digits',
  paymentTxHash: 'the settlement transaction’s hash, "0x" and 64 hex digits',
  amount: 'the listed price: a USDC string such as "$0.001" or "0.001", or whole micro-USDC such as 1000',
};
const USAGE_FORMS: Record<string, string> = {
  skillId: 'the skill’s id, a UUID',
  amountAtomic: 'the amount paid in the token’s atomic units, a string of digits',
  amount: `whole micro-USDC from 1 to ${MAX_USAGE_AMOUNT}, as a number or a string of digits`,
  paymentRef: 'a transaction hash or authorization nonce, a string of 1 to 200 characters',
  channelId: 'the payment channel the call was paid over, "0x" and 64 hex digits',
  chargedCumulativeAmount: 'the channel’s cumulative charge after the call in atomic units, a string of digits',
  depositTransaction: 'the transaction of the channel deposit the call made, "0x" and 64 hex digits',
  depositAmountAtomic: 'what that deposit put into the channel in atomic units, a string of digits',
};
const SHAPES =
  'a JSON object: {skillSlug, consumerAddress, paymentTxHash, amount} without a credential, or {skillId, amountAtomic, paymentRef?} (or {skillId, amountAtomic, channelId, chargedCumulativeAmount} for a channel call) with consumer credentials';

/** The problem a usage body has, as the error handler sends it: the first in `error`, each in `details`. */
interface UsageProblem {
  error: string;
  details: { field: string; message: string }[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Names the field of every problem of `value` against the shape it was meant as. */
function usageProblem(value: unknown): UsageProblem {
  if (!isObject(value))
    return { error: `Invalid request: the body must be ${SHAPES}`, details: [{ field: 'body', message: `must be ${SHAPES}` }] };
  const [schema, forms]: [TSchema, Record<string, string>] =
    'skillSlug' in value ? [ReportedPayment, REPORTED_FORMS] : [UsageBody, USAGE_FORMS];
  if (!('skillSlug' in value) && !('skillId' in value)) {
    const message = `is required: "skillSlug" (${REPORTED_FORMS.skillSlug}) without a credential, or "skillId" (${USAGE_FORMS.skillId}) with one`;
    return { error: `Invalid request: field "skillSlug" or "skillId" ${message}`, details: [{ field: 'skillSlug', message }] };
  }
  const seen = new Set<string>();
  const details: UsageProblem['details'] = [];
  for (const problem of Value.Errors(schema, value) as Iterable<ValueError>) {
    const field = problem.path.replace(/^\//, '').split('/')[0] ?? '';
    if (seen.has(field)) continue; // a union field reports each of its branches
    seen.add(field);
    const form = forms[field];
    const message = !form ? problem.message : field in value ? `must be ${form}` : `is required: ${form}`;
    details.push({ field, message });
  }
  // In the order the shape lists its fields, whatever order the validator found them in.
  const order = Object.keys(forms);
  const rank = (field: string) => (order.includes(field) ? order.indexOf(field) : order.length);
  details.sort((a, b) => rank(a.field) - rank(b.field));
  const first = details[0];
  if (!first) return { error: `Invalid request: the body must be ${SHAPES}`, details: [{ field: 'body', message: `must be ${SHAPES}` }] };
  return { error: `Invalid request: field "${first.field}" ${first.message}`, details };
}

/** The contract's {@link UsageRequest} with {@link usageProblem} as its validation error. */
export const UsageRequestBody: typeof UsageRequest = {
  ...UsageRequest,
  error: ({ found, value }: { found?: unknown; value?: unknown }) => usageProblem(value ?? found),
};
