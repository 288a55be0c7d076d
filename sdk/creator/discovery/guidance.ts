/**
 * The agent guidance a skill server's OpenAPI document carries (`info.x-guidance`): how to call and
 * pay its skills, in a few lines an agent reads before its first call. Crawlers inline guidance up
 * to about 4000 characters; this stays far below.
 */
import type { SkillRoute } from '../scheme';

/** Longest guidance a creator may give (crawlers warn past it: it no longer fits an agent's first look). */
export const MAX_GUIDANCE_CHARS = 4000;

/**
 * The default guidance of the server titled `title` selling `routes`: the call, the 402, the
 * offers it makes now (`exact`, and `batch-settlement` where a skill sells over channels), what is
 * never charged.
 *
 * @internal
 */
export function defaultGuidance(routes: readonly SkillRoute[], title: string): string {
  const first = routes[0];
  const network = first?.terms.paymentRequired.accepts[0]?.network ?? 'its network';
  const asset = first?.terms.asset;
  const channels = routes.some((route) => route.offers.has('batch-settlement'));
  const offers = [
    '`exact` (one EIP-3009 transfer authorization per call)',
    ...(channels
      ? ['`batch-settlement` (a payment channel: one deposit, then a signed voucher per call; what is left can be refunded)']
      : []),
  ].join(' or ');
  return [
    `${title} sells skills: HTTP calls priced per call in USD, paid with x402 v2 in ${asset ? `${asset.name} (${asset.address})` : 'its token'} on ${network}.`,
    '1. Call a skill with `POST /<name>` and a JSON body matching its request schema (the operation\'s requestBody). A paid call answers `{"success": true, "result": ...}`.',
    '2. Without a payment the call is answered 402 Payment Required, whatever its body: the terms are in the `PAYMENT-REQUIRED` header (base64 JSON), with the input and output schemas and an example body in `extensions.bazaar`.',
    `3. Pay one offer of \`accepts\`: ${offers}. Send the same POST again with the payment in the \`PAYMENT-SIGNATURE\` header (x402 v1 clients: \`X-PAYMENT\`); the receipt comes back in \`PAYMENT-RESPONSE\`.`,
    '4. Only a result is charged: invalid input (400, checked once a payment is attached), a failed skill (500) or a timeout (504) costs nothing.',
    '`GET /<name>` answers the same 402 (payment channels send their refunds there); call skills with POST.',
  ].join('\n');
}
