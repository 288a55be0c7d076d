import { expect } from 'bun:test';

/**
 * The answer every hostile input must get: the given 4xx status, the error shape
 * `{error, code, requestId}` with the request id also in `X-Request-Id`. Returns the body.
 */
export async function expectRefusal(
  res: Response,
  status: number,
  code?: string,
): Promise<{ error: string; code: string; requestId: string }> {
  const text = await res.text();
  expect({ status: res.status, body: text.slice(0, 300) }).toMatchObject({ status });
  const body = JSON.parse(text) as { error: string; code: string; requestId: string };
  expect(typeof body.error).toBe('string');
  expect(typeof body.code).toBe('string');
  expect(body.requestId).toBe(res.headers.get('x-request-id')!);
  if (code) expect(body.code).toBe(code);
  return body;
}

export const postJson = (body: string, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body,
});

/** `{"a":{"a":…}}` nested `depth` deep around `inner`. */
export const deepObject = (depth: number, inner = '1') => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
/** `[[[…]]]` nested `depth` deep. */
export const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/**
 * The headers every answer of the registry and the facilitator carries (no framing, no sniffing,
 * a referrer policy); returns the content policy for the caller's own checks.
 */
export function expectSecurityHeaders(headers: Headers, what: string): string {
  const seen = {
    what,
    frameOptions: headers.get('x-frame-options'),
    nosniff: headers.get('x-content-type-options'),
    referrer: headers.get('referrer-policy'),
    framing: /(^|;)\s*frame-ancestors 'none'\s*(;|$)/.test(headers.get('content-security-policy') ?? ''),
  };
  expect(seen).toEqual({ what, frameOptions: 'DENY', nosniff: 'nosniff', referrer: 'strict-origin-when-cross-origin', framing: true });
  return headers.get('content-security-policy')!;
}
