import { createHash } from 'node:crypto';
import { getAddress, type Address, type Hex } from 'viem';
import {
  X402Error,
  normalizeNetwork,
  parsePaymentPayload,
  parsePaymentRequirements,
  type DecodedPayment,
  type PaymentRequirements,
} from 'skill-market/x402';
import { REASONS } from './reasons';

/** A body that is not a facilitator request at all (answered 400, as the reference does). */
export class FacilitatorRequestError extends Error {
  override readonly name = 'FacilitatorRequestError';
}

/** A verify/settle request, both wire versions normalized to v2 requirements. */
export interface PaymentRequest {
  x402Version: 1 | 2;
  payment: DecodedPayment;
  requirements: PaymentRequirements;
  /** The network as the payload names it (a v1 name or CAIP-2), echoed in settle responses. */
  network: string;
  /** `authorization.from`, checksummed. */
  payer: Address;
}

export type ParsedRequest =
  | { type: 'request'; request: PaymentRequest }
  | { type: 'invalid'; reason: string; message: string; network: string; payer?: Address };

/** The token's own single-use key of an authorization. */
export interface AuthorizationKey {
  network: string;
  asset: Address;
  payer: Address;
  nonce: Hex;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses `{ x402Version, paymentPayload, paymentRequirements }`. Throws FacilitatorRequestError
 * when the body is malformed; returns `invalid` for well-formed requests this facilitator cannot
 * take (another scheme, an unknown v1 network name).
 */
export function parseFacilitatorRequest(body: unknown): ParsedRequest {
  if (!isRecord(body)) throw new FacilitatorRequestError('Malformed request: expected a JSON object');
  const { paymentPayload, paymentRequirements } = body;
  if (!isRecord(paymentPayload)) throw new FacilitatorRequestError('Malformed request: paymentPayload is missing');
  if (!isRecord(paymentRequirements)) throw new FacilitatorRequestError('Malformed request: paymentRequirements is missing');
  const version = paymentPayload.x402Version;
  if (body.x402Version !== undefined && body.x402Version !== version) {
    throw new FacilitatorRequestError('Malformed request: x402Version differs from paymentPayload.x402Version');
  }
  const echoed = typeof paymentPayload.network === 'string' ? paymentPayload.network : networkOf(paymentPayload.accepted);
  const invalid = (reason: string, error: X402Error): ParsedRequest => ({
    type: 'invalid',
    reason,
    message: error.message,
    network: echoed,
  });

  let payment: DecodedPayment;
  try {
    payment = parsePaymentPayload(paymentPayload);
  } catch (error) {
    if (error instanceof X402Error && error.code === 'unsupported_scheme') return invalid(REASONS.invalidScheme, error);
    if (error instanceof X402Error && error.code === 'invalid_network') return invalid(REASONS.networkMismatch, error);
    throw asRequestError(error);
  }
  let requirements: PaymentRequirements;
  try {
    requirements = parsePaymentRequirements(payment.x402Version === 1 ? fromV1(paymentRequirements) : paymentRequirements);
  } catch (error) {
    if (error instanceof X402Error && error.code === 'unsupported_scheme') return invalid(REASONS.invalidScheme, error);
    if (error instanceof X402Error && error.code === 'invalid_network') return invalid(REASONS.networkMismatch, error);
    throw asRequestError(error);
  }
  const network = payment.x402Version === 1 ? (payment.original as { network: string }).network : payment.network;
  return {
    type: 'request',
    request: {
      x402Version: payment.x402Version,
      payment,
      requirements,
      network,
      payer: getAddress(payment.authorization.from.toLowerCase()),
    },
  };
}

/** v1 requirements (`maxAmountRequired`, network names) in the v2 shape. */
function fromV1(requirements: Record<string, unknown>): Record<string, unknown> {
  const { maxAmountRequired, network, scheme, asset, payTo, maxTimeoutSeconds, extra } = requirements;
  return {
    scheme,
    network: typeof network === 'string' ? normalizeNetwork(network) : network,
    amount: maxAmountRequired,
    asset,
    payTo,
    maxTimeoutSeconds,
    extra,
  };
}

function networkOf(accepted: unknown): string {
  return isRecord(accepted) && typeof accepted.network === 'string' ? accepted.network.slice(0, 64) : '';
}

function asRequestError(error: unknown): Error {
  if (error instanceof X402Error) return new FacilitatorRequestError(error.message);
  return error instanceof Error ? error : new Error(String(error));
}

/** The single-use key: network, token, payer, nonce (checksummed addresses, lowercase nonce). */
export function authorizationKey(request: PaymentRequest): AuthorizationKey {
  return {
    network: request.requirements.network,
    asset: getAddress(request.requirements.asset.toLowerCase()),
    payer: request.payer,
    nonce: request.payment.authorization.nonce.toLowerCase() as Hex,
  };
}

/**
 * Fingerprint of everything a settlement depends on: the terms (network, token, domain,
 * recipient, amount) and the signed authorization with its signature. Settle reuses a verify's
 * result only when this matches, i.e. the payload is exactly the one verified.
 */
export function payloadHash(request: PaymentRequest): string {
  const { requirements: r, payment: p } = request;
  const a = p.authorization;
  const fields = [
    r.network,
    r.asset.toLowerCase(),
    r.payTo.toLowerCase(),
    r.amount,
    String(r.extra?.name ?? ''),
    String(r.extra?.version ?? ''),
    a.from.toLowerCase(),
    a.to.toLowerCase(),
    a.value,
    a.validAfter,
    a.validBefore,
    a.nonce.toLowerCase(),
    p.signature.toLowerCase(),
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}
