/**
 * HTTP details of the skill server shared by every route: the headers every answer carries
 * (no caching, CORS that lets browsers read the payment headers), JSON answers, bounded body reads.
 */
import { PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, RECEIPT_HEADER, X_PAYMENT_RESPONSE_HEADER } from '../x402/index';
import { parseGuardedJson } from '../http/json-guard';
import { readLimited } from '../http/read-limited';

/**
 * Headers a web page may read (CORS exposes them): the payment terms, the settlement and the signed receipt, replay and retry hints.
 *
 * @example
 * // As `CORS_EXPOSED_HEADERS` of skill-market/creator, for a server that answers preflights itself:
 * headers.set('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS); // 'PAYMENT-REQUIRED, PAYMENT-RESPONSE, …'
 */
export const EXPOSED_HEADERS = [
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  X_PAYMENT_RESPONSE_HEADER,
  RECEIPT_HEADER,
  'X-Payment-Replayed',
  'X-Trial-Calls-Left',
  'X-Trial-Resets-At',
  'Retry-After',
  'X-Request-Id',
].join(', ');

/** Headers on every answer: payment answers must never be cached. CORS headers are added by cors.ts, per request. */
const COMMON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
});

/** An answer as the replay cache stores it: enough to send it again byte for byte. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A stored answer as a fresh Response (a Response body can only be read once). */
export function toResponse(stored: StoredResponse, extraHeaders: Record<string, string> = {}): Response {
  return new Response(stored.body, { status: stored.status, headers: { ...COMMON_HEADERS, ...stored.headers, ...extraHeaders } });
}

/** A JSON answer with the common headers. */
export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): StoredResponse {
  return { status, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** The error body of the skill server: `{ success: false, error, timestamp }` (plus `details` when given). */
export function failure(
  status: number,
  error: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): StoredResponse {
  return jsonAnswer(status, { success: false, error, ...extra, timestamp: new Date().toISOString() }, headers);
}

/** Seconds a client is asked to wait before retrying a proof whose payment is still pending. */
const PENDING_RETRY_SECONDS = 2;

/**
 * The answer to a proof whose call ran but whose payment is not confirmed yet: 409 with
 * `code: 'payment_pending'` and `Retry-After`. Retrying with the same proof (never a new one)
 * gets the result once the transfer is confirmed, or a 402 if it finally failed.
 */
export function pendingAnswer(error: string): StoredResponse {
  return failure(
    409,
    error,
    { code: 'payment_pending', retryAfter: PENDING_RETRY_SECONDS },
    { 'Retry-After': String(PENDING_RETRY_SECONDS) },
  );
}

/** The body read as text, or `too-large` once more than `limit` bytes arrived (streams are cut off there). */
export async function readBodyText(request: Request, limit: number): Promise<{ type: 'text'; text: string } | { type: 'too-large' }> {
  const length = request.headers.get('content-length');
  const declared = length === null ? Number.NaN : Number(length);
  if (Number.isFinite(declared) && declared > limit) return { type: 'too-large' };
  // A declared length within the limit bounds the body (an HTTP server reads no more): read it at once.
  if (Number.isInteger(declared) && declared >= 0 && request.headers.get('transfer-encoding') === null) {
    const text = await request.text();
    return text.length > limit ? { type: 'too-large' } : { type: 'text', text };
  }
  const text = await readLimited(request.body, limit);
  return text === undefined ? { type: 'too-large' } : { type: 'text', text };
}

/** Parses a request body: empty means `{}` (a skill without input), anything else must be JSON nested at most MAX_JSON_DEPTH deep. */
export function parseJsonBody(text: string): { type: 'json'; value: unknown } | { type: 'invalid'; message: string } {
  if (text.trim() === '') return { type: 'json', value: {} };
  const parsed = parseGuardedJson(text);
  return parsed.type === 'json' ? { type: 'json', value: parsed.value } : { type: 'invalid', message: parsed.message };
}
