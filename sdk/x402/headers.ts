/**
 * HTTP header names of both x402 wire versions, and readers that turn a Headers object into a
 * result union instead of throwing.
 */
import { decodeBase64Json } from './base64';
import { decodePaymentPayload, decodeSettleResponse, encodeSettleResponse, type DecodedPayment } from './codec';
import { X402Error } from './errors';
import type { SettleResponse } from './schemas';

/**
 * v2: the server's terms, base64 JSON PaymentRequired.
 *
 * @example
 * const terms = decodePaymentRequired(answer.headers.get(PAYMENT_REQUIRED_HEADER) ?? '');
 */
export const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
/**
 * v2: the client's proof, base64 JSON PaymentPayload.
 *
 * @example
 * await fetch(url, { method: 'POST', headers: { [PAYMENT_SIGNATURE_HEADER]: encodePaymentPayload(payload) }, body });
 */
export const PAYMENT_SIGNATURE_HEADER = 'PAYMENT-SIGNATURE';
/**
 * The client's proof as x402 v1 and the marketplace's first clients name it (X-PAYMENT).
 *
 * @example
 * await fetch(url, { method: 'POST', headers: { [X_PAYMENT_HEADER]: encodePaymentPayload(payload) }, body }); // a v1 server
 */
export const X_PAYMENT_HEADER = 'X-PAYMENT';
/**
 * v2: the settlement receipt.
 *
 * @example
 * const receipt = decodeSettleResponse(answer.headers.get(PAYMENT_RESPONSE_HEADER) ?? '');
 */
export const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';
/**
 * v1: the settlement receipt.
 *
 * @example
 * const value = answer.headers.get(PAYMENT_RESPONSE_HEADER) ?? answer.headers.get(X_PAYMENT_RESPONSE_HEADER);
 */
export const X_PAYMENT_RESPONSE_HEADER = 'X-PAYMENT-RESPONSE';

/** Anything with a case-insensitive `get`, e.g. a Fetch `Headers`. */
export interface HeaderReader {
  /** The header's value, matched case-insensitively; null or undefined when absent. */
  get(name: string): string | null | undefined;
}

/** Outcome of reading a payment proof from request headers. */
export type PaymentHeaderResult =
  | { type: 'none' }
  | { type: 'payment'; payment: DecodedPayment; header: typeof PAYMENT_SIGNATURE_HEADER | typeof X_PAYMENT_HEADER }
  | { type: 'error'; error: X402Error };

/**
 * Reads the payment proof from `PAYMENT-SIGNATURE` (preferred) or `X-Payment`.
 * Never throws: returns `none` when neither header is present, `error` with an X402Error when the
 * proof is malformed or when both headers are present with different values.
 *
 * @example
 * const r = readPaymentHeader(request.headers);
 * switch (r.type) { case "none": return paymentRequired(); case "error": return reject(r.error.code); case "payment": ... }
 */
export function readPaymentHeader(headers: HeaderReader): PaymentHeaderResult {
  const signature = headers.get(PAYMENT_SIGNATURE_HEADER) ?? null;
  const legacy = headers.get(X_PAYMENT_HEADER) ?? null;
  if (signature === null && legacy === null) return { type: 'none' };
  if (signature !== null && legacy !== null && signature !== legacy) {
    return {
      type: 'error',
      error: new X402Error('malformed_payment', 'Both PAYMENT-SIGNATURE and X-Payment are present with different values'),
    };
  }
  const header = signature !== null ? PAYMENT_SIGNATURE_HEADER : X_PAYMENT_HEADER;
  try {
    return { type: 'payment', payment: decodePaymentPayload((signature ?? legacy) as string), header };
  } catch (error) {
    return { type: 'error', error: toX402Error(error, 'malformed_payment') };
  }
}

/** Outcome of reading a payment of any scheme from request headers: its decoded JSON and the scheme it names. */
export type PaymentEnvelopeResult =
  | { type: 'none' }
  | { type: 'payment'; payload: Record<string, unknown>; scheme: string }
  | { type: 'error'; error: X402Error };

/**
 * Reads a payment of any scheme from `PAYMENT-SIGNATURE` (preferred) or `X-Payment`: the decoded
 * JSON object and the scheme it names (x402 v2 `accepted.scheme`, v1 `scheme`), nothing more
 * checked; each scheme parses its own payload. Never throws.
 *
 * @example
 * const read = readPaymentEnvelope(request.headers);
 * if (read.type === 'payment' && read.scheme === 'exact') payment = parsePaymentPayload(read.payload);
 */
export function readPaymentEnvelope(headers: HeaderReader): PaymentEnvelopeResult {
  const signature = headers.get(PAYMENT_SIGNATURE_HEADER) ?? null;
  const legacy = headers.get(X_PAYMENT_HEADER) ?? null;
  if (signature === null && legacy === null) return { type: 'none' };
  if (signature !== null && legacy !== null && signature !== legacy) {
    return {
      type: 'error',
      error: new X402Error('malformed_payment', 'Both PAYMENT-SIGNATURE and X-Payment are present with different values'),
    };
  }
  let decoded: unknown;
  try {
    decoded = decodeBase64Json((signature ?? legacy) as string, 'malformed_payment', 'payment header');
  } catch (error) {
    return { type: 'error', error: toX402Error(error, 'malformed_payment') };
  }
  const payload = record(decoded);
  if (!payload) return { type: 'error', error: new X402Error('malformed_payment', 'Malformed payment payload: expected a JSON object') };
  const scheme = payload.x402Version === 1 ? payload.scheme : record(payload.accepted)?.scheme;
  if (typeof scheme !== 'string')
    return { type: 'error', error: new X402Error('malformed_payment', 'Malformed payment payload: no scheme') };
  return { type: 'payment', payload, scheme };
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** Outcome of reading a settlement receipt from response headers. */
export type SettleHeaderResult = { type: 'none' } | { type: 'receipt'; receipt: SettleResponse } | { type: 'error'; error: X402Error };

/**
 * Reads the settlement receipt from `PAYMENT-RESPONSE` (preferred) or `X-PAYMENT-RESPONSE`.
 * Never throws.
 *
 * @example
 * const read = readSettleResponseHeader(answer.headers);
 * if (read.type === 'receipt' && read.receipt.success) console.log('paid in', read.receipt.transaction);
 */
export function readSettleResponseHeader(headers: HeaderReader): SettleHeaderResult {
  const value = headers.get(PAYMENT_RESPONSE_HEADER) ?? headers.get(X_PAYMENT_RESPONSE_HEADER) ?? null;
  if (value === null) return { type: 'none' };
  try {
    return { type: 'receipt', receipt: decodeSettleResponse(value) };
  } catch (error) {
    return { type: 'error', error: toX402Error(error, 'malformed_settle_response') };
  }
}

/**
 * The receipt headers a skill server adds after settlement: the same base64 value under
 * `PAYMENT-RESPONSE` (v2) and `X-PAYMENT-RESPONSE` (v1).
 *
 * @example
 * const headers = settleResponseHeaders({ success: true, transaction, network: 'eip155:8453', payer });
 * return Response.json(result, { headers }); // PAYMENT-RESPONSE and X-PAYMENT-RESPONSE
 */
export function settleResponseHeaders(response: SettleResponse): Record<string, string> {
  const value = encodeSettleResponse(response);
  return { [PAYMENT_RESPONSE_HEADER]: value, [X_PAYMENT_RESPONSE_HEADER]: value };
}

function toX402Error(error: unknown, code: 'malformed_payment' | 'malformed_settle_response'): X402Error {
  if (error instanceof X402Error) return error;
  return new X402Error(code, 'Malformed header', { cause: error });
}
