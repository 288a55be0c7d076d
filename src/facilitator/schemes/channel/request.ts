/**
 * A verify/settle request of the `batch-settlement` scheme: the standard envelope
 * `{x402Version, paymentPayload: {x402Version: 2, accepted, payload}, paymentRequirements}`, with
 * requirements parsed strictly (a body that is not such a request answers 400) and the payload
 * left to the operation, which answers a bad one with the spec's reason.
 */
import { BatchSettlementPayloadError, parseBatchRequirements, type BatchRequirements } from 'skill-market/x402';
import { FacilitatorRequestError } from '../../request';

export interface ChannelRequest {
  requirements: BatchRequirements;
  /** `paymentPayload.accepted`, as sent. */
  accepted: Record<string, unknown>;
  /** `paymentPayload.payload`, unparsed. */
  payload: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Throws FacilitatorRequestError when `body` is not a well-formed request of the scheme. */
export function parseChannelRequest(body: unknown): ChannelRequest {
  const malformed = (why: string) => new FacilitatorRequestError(`Malformed request: ${why}`);
  if (!isRecord(body)) throw malformed('expected {x402Version: 2, paymentPayload: {…}, paymentRequirements: {…}}');
  if (body.x402Version !== undefined && body.x402Version !== 2) throw malformed('batch-settlement is an x402Version 2 scheme');
  const payment = body.paymentPayload;
  if (!isRecord(payment) || payment.x402Version !== 2) throw malformed('paymentPayload must be an x402Version 2 PaymentPayload');
  if (!isRecord(payment.accepted)) throw malformed('paymentPayload.accepted must be the requirements the client accepted');
  if (!isRecord(payment.payload)) throw malformed('paymentPayload.payload must be an object');
  try {
    return { requirements: parseBatchRequirements(body.paymentRequirements), accepted: payment.accepted, payload: payment.payload };
  } catch (error) {
    if (error instanceof BatchSettlementPayloadError) throw malformed(error.message);
    throw error;
  }
}
