/**
 * The verify/settle request envelope, `{x402Version, paymentPayload, paymentRequirements}`, as far
 * as every scheme shares it: its shape, and the scheme it names. What is inside is the scheme's to
 * parse. A body that is not a facilitator request at all answers 400, as the reference does.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { FacilitatorRequestSchema, type FacilitatorRequest } from 'skill-market/x402';

/** A body that is not a facilitator request at all (answered 400, as the reference does). */
export class FacilitatorRequestError extends Error {
  override readonly name = 'FacilitatorRequestError';
}

/** A request and the scheme it names. */
export interface SchemeRequest {
  scheme: string;
  body: FacilitatorRequest;
}

const envelope = TypeCompiler.Compile(FacilitatorRequestSchema);

const schemeOf = (value: unknown): string | undefined => {
  const scheme = (value as { scheme?: unknown } | undefined)?.scheme;
  return typeof scheme === 'string' && scheme !== '' ? scheme : undefined;
};

/**
 * The envelope and its scheme: `paymentPayload.accepted.scheme` (v2; `paymentPayload.scheme` in
 * v1), else `paymentRequirements.scheme`. Throws FacilitatorRequestError on what no scheme could
 * take, worded as the x402 codec words it: a body that is not an envelope, an x402Version that is
 * not the payload's, a payload without a known x402Version, a request that names no scheme.
 */
export function parseEnvelope(body: unknown): SchemeRequest {
  const malformed = (message: string) => new FacilitatorRequestError(message);
  if (!envelope.Check(body))
    throw malformed('Malformed request: expected {x402Version: 1 | 2, paymentPayload: {…}, paymentRequirements: {…}}');
  const payment = body.paymentPayload as { x402Version?: unknown; accepted?: unknown };
  if (body.x402Version !== undefined && body.x402Version !== payment.x402Version) {
    throw malformed('Malformed request: x402Version differs from paymentPayload.x402Version');
  }
  if (typeof payment.x402Version !== 'number') throw malformed('Malformed payment payload: /x402Version is missing');
  if (payment.x402Version !== 1 && payment.x402Version !== 2) throw malformed(`Unsupported x402Version ${payment.x402Version}`);
  const scheme = (payment.x402Version === 2 ? schemeOf(payment.accepted) : schemeOf(payment)) ?? schemeOf(body.paymentRequirements);
  if (!scheme) throw malformed(`Malformed payment payload: ${payment.x402Version === 2 ? '/accepted/scheme' : '/scheme'} is missing`);
  return { scheme, body };
}
