/**
 * A verify/settle request of the upto scheme: v2 only, the Permit2 authorization parsed field by
 * field, the requirements (whose `amount` is the maximum at verify and the charge at settle).
 */
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { getAddress, keccak256, toHex, type Address } from 'viem';
import {
  ADDRESS_PATTERN,
  UPTO_SCHEME,
  X402Error,
  isCaip2Network,
  parseUptoPayload,
  requestedNetwork,
  type UptoPayload,
} from 'skill-market/x402';
import { FacilitatorRequestError } from '../../request';
import { REASONS } from './reasons';

/** The requirements of an upto payment as the facilitator reads them. */
interface UptoRequirements {
  scheme: string;
  network: string;
  amount: string;
  asset: Address;
  payTo: Address;
  maxTimeoutSeconds?: number;
  extra?: Record<string, unknown> | null;
}

export interface UptoRequest {
  requirements: UptoRequirements;
  /** `paymentPayload.accepted`: what the client signed for. */
  accepted: UptoRequirements;
  payment: UptoPayload;
  /** `permit2Authorization.from`, checksummed. */
  payer: Address;
  network: string;
}

export type ParsedUptoRequest =
  | { type: 'request'; request: UptoRequest }
  | { type: 'invalid'; reason: string; message: string; network: string; payer?: Address };

const RequirementsSchema = Type.Object({
  scheme: Type.String({ minLength: 1, maxLength: 64 }),
  network: Type.String({ minLength: 1, maxLength: 64 }),
  amount: Type.String({ pattern: '^(?:0|[1-9][0-9]{0,77})$' }),
  asset: Type.String({ pattern: ADDRESS_PATTERN.source }),
  payTo: Type.String({ pattern: ADDRESS_PATTERN.source }),
  maxTimeoutSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
  extra: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
});
const requirementsCheck = TypeCompiler.Compile(RequirementsSchema);

function requirementsOf(value: unknown, where: string): UptoRequirements {
  if (requirementsCheck.Check(value)) return value as UptoRequirements;
  const first = requirementsCheck.Errors(value).First();
  throw new FacilitatorRequestError(`Malformed ${where}: ${first?.path || '/'} ${first?.message ?? 'is invalid'}`);
}

/**
 * Parses an upto request (the envelope was checked by the service). Throws FacilitatorRequestError
 * when it is malformed; returns `invalid` for well-formed requests of another scheme or version.
 */
export function parseUptoRequest(body: { x402Version?: number; paymentPayload: object; paymentRequirements: object }): ParsedUptoRequest {
  const network = requestedNetwork(body);
  const payload = body.paymentPayload as { x402Version?: unknown; accepted?: unknown; payload?: unknown };
  if (payload.x402Version !== 2) {
    return { type: 'invalid', reason: REASONS.invalidScheme, message: 'The upto scheme is x402 version 2 only', network };
  }
  const requirements = requirementsOf(body.paymentRequirements, 'payment requirements');
  const accepted = requirementsOf(payload.accepted, 'paymentPayload.accepted');
  let payment: UptoPayload;
  try {
    payment = parseUptoPayload(payload.payload);
  } catch (error) {
    if (error instanceof X402Error) throw new FacilitatorRequestError(error.message);
    throw error;
  }
  const payer = getAddress(payment.permit2Authorization.from.toLowerCase());
  if (accepted.scheme !== UPTO_SCHEME || requirements.scheme !== UPTO_SCHEME) {
    return {
      type: 'invalid',
      reason: REASONS.invalidScheme,
      message: 'Both the payload and the requirements must name the upto scheme',
      network,
      payer,
    };
  }
  if (!isCaip2Network(requirements.network) || accepted.network !== requirements.network) {
    return {
      type: 'invalid',
      reason: REASONS.networkMismatch,
      message: 'The payload and the requirements name different networks',
      network,
      payer,
    };
  }
  return { type: 'request', request: { requirements, accepted, payment, payer, network: requirements.network } };
}

/** Fingerprint of the signed authorization and its signature: settle reuses a verify only for exactly this payload. */
export function payloadHash(payment: UptoPayload): string {
  const a = payment.permit2Authorization;
  const fields = [
    a.from,
    a.permitted.token,
    a.permitted.amount,
    a.spender,
    BigInt(a.nonce).toString(),
    a.deadline,
    a.witness.to,
    a.witness.facilitator,
    a.witness.validAfter,
    payment.signature,
  ];
  return keccak256(toHex(fields.map((f) => f.toLowerCase()).join('|')));
}
