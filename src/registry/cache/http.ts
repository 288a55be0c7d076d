/** One answer as sent: its JSON body, its entity tag, and headers of its own (e.g. the next page's link). */
export interface CachedAnswer {
  body: string;
  etag: string;
  headers?: Record<string, string>;
}

/** A JSON answer ready to keep and to send again: the body serialized once, its entity tag its hash. */
export function jsonAnswer(value: unknown, headers?: Record<string, string>): CachedAnswer {
  return bodyAnswer(JSON.stringify(value), headers);
}

/** An answer of a JSON body already serialized. */
export function bodyAnswer(body: string, headers?: Record<string, string>): CachedAnswer {
  return { body, etag: `"${Bun.hash(body).toString(36)}-${body.length.toString(36)}"`, ...(headers ? { headers } : {}) };
}

/**
 * Sends `answer`: 304 without a body when the request's If-None-Match names its tag (weak
 * comparison, as RFC 9110 asks for GET), else 200 with the JSON. `cacheControl` says who may keep it.
 */
export function sendAnswer(request: Request, answer: CachedAnswer, cacheControl: string): Response {
  const headers: Record<string, string> = { etag: answer.etag, 'cache-control': cacheControl, ...answer.headers };
  if (noneMatch(request.headers.get('if-none-match'), answer.etag)) return new Response(null, { status: 304, headers });
  return new Response(answer.body, { headers: { ...headers, 'content-type': 'application/json' } });
}

function noneMatch(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * Whether the request carries a credential (an Authorization header or the access cookie): such a
 * request is answered privately, from the primary, past the cache, so its sender sees its own writes.
 */
export function hasCredential(request: Request, cookieName: string): boolean {
  if (request.headers.has('authorization')) return true;
  const cookies = request.headers.get('cookie');
  return cookies?.split(';').some((c) => c.trimStart().startsWith(`${cookieName}=`)) ?? false;
}
