import { getAddress, type Address, type Hex } from 'viem';
import {
  X402Error,
  paymentFingerprint,
  parseFacilitatorRequest as parseWire,
  requestedNetwork,
  type DecodedPayment,
  type PaymentRequirements,
} from 'skill-market/x402';
import { FacilitatorRequestError } from '../../request';
import type { AuthorizationKey } from '../../types';
import { REASONS } from './reasons';

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

/**
 * Parses `{ x402Version, paymentPayload, paymentRequirements }` with the x402 module's parser.
 * Throws FacilitatorRequestError when the body is malformed; returns `invalid` for well-formed
 * requests this facilitator cannot take (another scheme, an unknown network).
 */
export function parseFacilitatorRequest(body: unknown): ParsedRequest {
  try {
    const parsed = parseWire(body);
    return { type: 'request', request: { ...parsed, payer: getAddress(parsed.payment.authorization.from.toLowerCase()) } };
  } catch (error) {
    if (!(error instanceof X402Error)) throw error;
    const network = requestedNetwork(body);
    if (error.code === 'unsupported_scheme') return { type: 'invalid', reason: REASONS.invalidScheme, message: error.message, network };
    if (error.code === 'invalid_network') return { type: 'invalid', reason: REASONS.networkMismatch, message: error.message, network };
    throw new FacilitatorRequestError(error.message);
  }
}

/** The single-use key: network, token, payer, nonce (checksummed addresses, lowercase nonce). */
export function keyOf(request: PaymentRequest): AuthorizationKey {
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
  const r = request.requirements;
  return paymentFingerprint(request.payment, [
    r.network,
    r.asset.toLowerCase(),
    r.payTo.toLowerCase(),
    r.amount,
    String(r.extra?.name ?? ''),
    String(r.extra?.version ?? ''),
  ]);
}
