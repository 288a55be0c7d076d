/**
 * Encode/decode of every x402 wire object (PaymentRequired, PaymentPayload v1/v2, SettleResponse).
 * Decoders never throw anything but X402Error; encoders validate what they are given first, so a
 * bug on our side fails loudly here instead of producing a header a peer rejects.
 */
import { decodeBase64Json, encodeBase64Json } from './base64';
import { X402Error } from './errors';
import { normalizeNetwork, parseCaip2, type Caip2Network } from './networks';
import { isUint256String, type Hex } from './patterns';
import {
  Checkers,
  checkShape,
  type Authorization,
  type PaymentPayloadV1,
  type PaymentPayloadV2,
  type PaymentRequired,
  type PaymentRequirements,
  type ResourceInfo,
  type SettleResponse,
} from './schemas';

/** A payment proof of either wire version, normalized to one shape (the original kept verbatim). */
export interface DecodedPayment {
  x402Version: 1 | 2;
  scheme: 'exact';
  /** CAIP-2 network (v1 names such as `base` are mapped). */
  network: Caip2Network;
  /** v2 only: the requirements the client says it accepted, as sent. */
  accepted?: PaymentRequirements;
  authorization: Authorization;
  signature: Hex;
  resource?: ResourceInfo;
  extensions?: Record<string, unknown>;
  /** The payload object exactly as decoded; forward this to a facilitator. */
  original: PaymentPayloadV1 | PaymentPayloadV2;
}

function withoutNulls<T extends object>(value: T): T {
  const copy = { ...value } as Record<string, unknown>;
  for (const key of Object.keys(copy)) if (copy[key] === null) delete copy[key];
  return copy as T;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkUint256(fields: Record<string, unknown>, what: string): void {
  for (const [name, value] of Object.entries(fields)) {
    if (!isUint256String(value)) throw new X402Error('malformed_payment', `Malformed ${what}: ${name} exceeds uint256`);
  }
}

/**
 * Validates strict exact-EVM v2 requirements (e.g. the `paymentRequirements` of a facilitator
 * request) and returns them without null extras.
 *
 * @throws X402Error("unsupported_scheme" | "invalid_requirements")
 *
 * @example
 * const requirements = parsePaymentRequirements(request.paymentRequirements); // throws X402Error when not exact-EVM v2
 */
export function parsePaymentRequirements(value: unknown): PaymentRequirements {
  if (isRecord(value) && typeof value.scheme === 'string' && value.scheme !== 'exact') {
    throw new X402Error('unsupported_scheme', `Unsupported scheme ${JSON.stringify(value.scheme.slice(0, 32))}`);
  }
  const requirements = checkShape<PaymentRequirements>(Checkers.requirements, value, 'invalid_requirements', 'payment requirements');
  if (!isUint256String(requirements.amount))
    throw new X402Error('invalid_requirements', 'Malformed payment requirements: amount exceeds uint256');
  try {
    parseCaip2(requirements.network);
  } catch (cause) {
    throw new X402Error('invalid_requirements', `Malformed payment requirements: network ${requirements.network}`, { cause });
  }
  return withoutNulls(requirements);
}

/**
 * Validates a decoded PaymentPayload object (v1 or v2) and normalizes it.
 *
 * @throws X402Error("malformed_payment" | "unsupported_version" | "unsupported_scheme" | "invalid_network")
 *
 * @example
 * const payment = parsePaymentPayload(await request.json()); // v1 or v2, normalized
 * payment.authorization.value; // atomic units, as a decimal string
 */
export function parsePaymentPayload(value: unknown): DecodedPayment {
  if (!isRecord(value)) throw new X402Error('malformed_payment', 'Malformed payment payload: expected a JSON object');
  const version = value.x402Version;
  if (typeof version !== 'number') throw new X402Error('malformed_payment', 'Malformed payment payload: /x402Version is missing');
  if (version !== 1 && version !== 2) throw new X402Error('unsupported_version', `Unsupported x402Version ${version}`);
  const scheme = version === 2 ? (isRecord(value.accepted) ? value.accepted.scheme : undefined) : value.scheme;
  if (typeof scheme === 'string' && scheme !== 'exact') {
    throw new X402Error('unsupported_scheme', `Unsupported scheme ${JSON.stringify(scheme.slice(0, 32))}`);
  }
  if (version === 2) {
    const p = checkShape<PaymentPayloadV2>(Checkers.payloadV2, value, 'malformed_payment', 'payment payload');
    const { value: amount, validAfter, validBefore } = p.payload.authorization;
    checkUint256({ amount: p.accepted.amount, value: amount, validAfter, validBefore }, 'payment payload');
    const network = p.accepted.network;
    parseCaip2(network);
    const decoded: DecodedPayment = {
      x402Version: 2,
      scheme: 'exact',
      network,
      accepted: withoutNulls(p.accepted),
      authorization: p.payload.authorization,
      signature: p.payload.signature,
      original: p,
    };
    if (isRecord(p.resource)) decoded.resource = withoutNulls(p.resource);
    if (isRecord(p.extensions)) decoded.extensions = p.extensions;
    return decoded;
  }
  const p = checkShape<PaymentPayloadV1>(Checkers.payloadV1, value, 'malformed_payment', 'payment payload');
  const { value: amount, validAfter, validBefore } = p.payload.authorization;
  checkUint256({ value: amount, validAfter, validBefore }, 'payment payload');
  return {
    x402Version: 1,
    scheme: 'exact',
    network: normalizeNetwork(p.network),
    authorization: p.payload.authorization,
    signature: p.payload.signature,
    original: p,
  };
}

/**
 * Decodes a PAYMENT-SIGNATURE / X-Payment header value. Throws X402Error only (see parsePaymentPayload).
 *
 * @example
 * import { decodePaymentPayload, PAYMENT_SIGNATURE_HEADER } from 'skill-market/x402';
 *
 * const header = request.headers.get(PAYMENT_SIGNATURE_HEADER); // or X-Payment (v1)
 * if (header) {
 *   const payment = decodePaymentPayload(header);
 *   console.log(payment.x402Version, payment.network, payment.authorization.from, payment.authorization.value);
 * }
 */
export function decodePaymentPayload(header: string): DecodedPayment {
  return parsePaymentPayload(decodeBase64Json(header, 'malformed_payment', 'payment header'));
}

/**
 * Encodes a v1 or v2 PaymentPayload for the PAYMENT-SIGNATURE / X-Payment header (validated first).
 *
 * @example
 * import { decodePaymentRequired, encodePaymentPayload, signAuthorization } from 'skill-market/x402';
 *
 * const { accepts, resource } = decodePaymentRequired(first.headers.get('PAYMENT-REQUIRED') ?? '');
 * const payload = await signAuthorization(account, accepts[0]!, { resource }); // a viem account
 * await fetch(url, { method: 'POST', headers: { 'PAYMENT-SIGNATURE': encodePaymentPayload(payload) }, body });
 */
export function encodePaymentPayload(payload: PaymentPayloadV2 | PaymentPayloadV1): string {
  parsePaymentPayload(payload);
  return encodeBase64Json(payload);
}

/**
 * Validates a decoded PaymentRequired object (v2) and drops null optionals. Throws X402Error.
 *
 * @example
 * const { accepts } = parsePaymentRequired(decodeBase64Json(header, 'malformed_payment_required', 'PAYMENT-REQUIRED'));
 */
export function parsePaymentRequired(value: unknown): PaymentRequired {
  if (isRecord(value) && typeof value.x402Version === 'number' && value.x402Version !== 2) {
    throw new X402Error('unsupported_version', `Unsupported PaymentRequired x402Version ${value.x402Version}`);
  }
  const pr = checkShape<PaymentRequired>(Checkers.paymentRequired, value, 'malformed_payment_required', 'PaymentRequired');
  const out = withoutNulls({ ...pr, resource: withoutNulls(pr.resource), accepts: pr.accepts.map((a) => withoutNulls(a)) });
  return out;
}

/**
 * Decodes a PAYMENT-REQUIRED header value. Throws X402Error only.
 *
 * @example
 * import { decodePaymentRequired } from 'skill-market/x402';
 *
 * const answer = await fetch(url, { method: 'POST', body });
 * if (answer.status === 402) {
 *   const { accepts, resource } = decodePaymentRequired(answer.headers.get('PAYMENT-REQUIRED') ?? '');
 *   console.log(resource.url, accepts[0]?.amount, accepts[0]?.payTo);
 * }
 */
export function decodePaymentRequired(header: string): PaymentRequired {
  return parsePaymentRequired(decodeBase64Json(header, 'malformed_payment_required', 'PAYMENT-REQUIRED header'));
}

/**
 * Encodes a v2 PaymentRequired for the PAYMENT-REQUIRED header (validated first).
 *
 * @example
 * import { encodePaymentRequired } from 'skill-market/x402';
 *
 * const header = encodePaymentRequired({ x402Version: 2, resource: { url: 'https://skills.example/echo' }, accepts: [requirements] });
 * return new Response('{}', { status: 402, headers: { 'PAYMENT-REQUIRED': header } });
 */
export function encodePaymentRequired(paymentRequired: PaymentRequired): string {
  parsePaymentRequired(paymentRequired);
  return encodeBase64Json(paymentRequired);
}

/**
 * Validates a SettleResponse (header content or a facilitator /settle answer). Throws X402Error.
 *
 * @example
 * const receipt = parseSettleResponse(await (await fetch(`${facilitatorUrl}/settle`, { method: 'POST', body })).json());
 * if (!receipt.success) console.log(receipt.errorReason);
 */
export function parseSettleResponse(value: unknown): SettleResponse {
  const r = checkShape<SettleResponse>(Checkers.settleResponse, value, 'malformed_settle_response', 'settle response');
  const out: SettleResponse = { success: r.success, transaction: r.transaction, network: r.network };
  if (typeof r.errorReason === 'string') out.errorReason = r.errorReason;
  if (typeof r.errorMessage === 'string') out.errorMessage = r.errorMessage;
  if (typeof r.payer === 'string') out.payer = r.payer;
  return out;
}

/**
 * Decodes a PAYMENT-RESPONSE / X-PAYMENT-RESPONSE header value. Throws X402Error only.
 *
 * @example
 * import { decodeSettleResponse } from 'skill-market/x402';
 *
 * const receipt = decodeSettleResponse(answer.headers.get('PAYMENT-RESPONSE') ?? '');
 * if (receipt.success) console.log(`paid in ${receipt.transaction} on ${receipt.network}`);
 */
export function decodeSettleResponse(header: string): SettleResponse {
  return parseSettleResponse(decodeBase64Json(header, 'malformed_settle_response', 'payment response header'));
}

/**
 * Encodes a SettleResponse (known fields only) for PAYMENT-RESPONSE / X-PAYMENT-RESPONSE.
 *
 * @example
 * import { encodeSettleResponse } from 'skill-market/x402';
 *
 * const headers = { 'PAYMENT-RESPONSE': encodeSettleResponse({ success: true, transaction, network: 'eip155:8453' }) };
 */
export function encodeSettleResponse(response: SettleResponse): string {
  return encodeBase64Json(parseSettleResponse(response));
}
