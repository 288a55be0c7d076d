import { parseGuardedJson } from '../http/json-guard';
/**
 * base64(UTF-8 JSON) as x402 headers carry it: standard alphabet (`+/`), `=` padding required.
 * Web APIs only (btoa/atob, TextEncoder/TextDecoder) so it runs on Node 20+, Bun and browsers.
 */
import { X402Error, type X402ErrorCode } from './errors';

/**
 * Largest header value any decoder accepts, in characters (16 KiB).
 *
 * @example
 * const header = request.headers.get('PAYMENT-SIGNATURE');
 * if (header && header.length > MAX_HEADER_LENGTH) return new Response('payment header too long', { status: 400 });
 */
export const MAX_HEADER_LENGTH = 16 * 1024;

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CHUNK = 0x8000;
/** Any UTF-16 code unit above 0x7f (surrogates included): the text is not ASCII. */
const NOT_ASCII = /[\u0080-\uffff]/;

/**
 * Encodes a JSON-serializable value as standard, padded base64 of its UTF-8 JSON.
 *
 * @example
 * encodeBase64Json({ success: true }); // 'eyJzdWNjZXNzIjp0cnVlfQ=='
 */
export function encodeBase64Json(value: unknown): string {
  const json = JSON.stringify(value);
  // ASCII JSON (every payment header in practice) is its own UTF-8: btoa takes it as it is.
  if (!NOT_ASCII.test(json)) return btoa(json);
  const bytes = new TextEncoder().encode(json);
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

/**
 * Decodes standard padded base64 of UTF-8 JSON. Rejects, with X402Error(code): non-strings,
 * empty or oversize input, base64url or unpadded input, invalid UTF-8 and invalid JSON.
 *
 * @example
 * decodeBase64Json('eyJzdWNjZXNzIjp0cnVlfQ==', 'malformed_settle_response', 'receipt'); // { success: true }
 * decodeBase64Json('not base64!', 'malformed_payment', 'payment'); // throws X402Error('malformed_payment')
 */
export function decodeBase64Json(text: unknown, code: X402ErrorCode, what: string): unknown {
  if (typeof text !== 'string' || text.length === 0) {
    throw new X402Error(code, `Malformed ${what}: empty or not a string`);
  }
  if (text.length > MAX_HEADER_LENGTH) {
    throw new X402Error(code, `Malformed ${what}: ${text.length} characters exceeds the ${MAX_HEADER_LENGTH} limit`);
  }
  if (!STANDARD_BASE64.test(text)) {
    throw new X402Error(code, `Malformed ${what}: not standard padded base64`);
  }
  let json: string;
  try {
    const binary = atob(text);
    if (NOT_ASCII.test(binary)) {
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      json = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    } else json = binary; // ASCII bytes are UTF-8 text as they are
  } catch (cause) {
    throw new X402Error(code, `Malformed ${what}: base64 does not decode to UTF-8 text`, { cause });
  }
  const parsed = parseGuardedJson(json);
  if (parsed.type === 'json') return parsed.value;
  throw new X402Error(code, parsed.type === 'too-deep' ? `Malformed ${what}: ${parsed.message}` : `Malformed ${what}: not valid JSON`);
}
