import { Elysia } from 'elysia';
import { parseGuardedJson, readLimitedBytes, requestPath } from 'skill-market/http';
import type { Logger } from '../log';
import type { PendingWork } from '../runtime/pending';
import { AppError } from './errors';

const REQUEST_ID_HEADER = 'x-request-id';
const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;
/** A NUL in the path or query, raw or percent-encoded: PostgreSQL refuses it in text. */
const NUL_IN_URL = /%00|\0/i;
const JSON_TYPE = /^application\/([a-z.+-]*\+)?json$/i;
const startedAt = new WeakMap<Request, number>();
/** Resolves a request's entry in `pending` once its access-log line is written. */
const logged = new WeakMap<Request, () => void>();

const tooLarge = (limit: number) => new AppError('PAYLOAD_TOO_LARGE', `Request body too large: the limit is ${limit} bytes`);
const malformed = (why = 'expected valid JSON') => new AppError('MALFORMED_BODY', `Malformed request body: ${why}`);
const nulRefused = (where: string) => new AppError('VALIDATION', `Invalid request: the ${where} must not contain NUL characters`);
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The dotted path of the first string (key or value) in `value` that `bad` matches, for the error text. */
function fieldWith(value: unknown, bad: (text: string) => boolean, path = ''): string | undefined {
  if (typeof value === 'string') return bad(value) ? path || 'body' : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const here = path ? `${path}.${key}` : key;
    if (bad(key)) return here;
    const found = fieldWith(item, bad, here);
    if (found) return found;
  }
  return undefined;
}

/**
 * Gives every request an id (a sane incoming `X-Request-Id` is kept, otherwise a new UUID),
 * echoes it on the response, refuses what no route can take before any route sees it — bodies
 * over the limit (by Content-Length before reading, and again while reading); NUL characters in
 * the URL or a body, and lone surrogate escapes, which PostgreSQL cannot store; JSON nested deeper
 * than the guard allows, JSON that is not valid (an empty or broken body is never `{}`) or not an
 * object — and writes one access-log line per request: method, path (never the query, which may
 * carry tokens), status, duration, request id.
 *
 * Every body is read here, bounded, whatever its type, so the listener's own body limit can stay
 * above ours and every 413 is answered in the error shape.
 */
/** A request answered, as the access log has it, for whoever counts them (the metrics). */
export interface Answered {
  method: string;
  /** The template of the route that took it (`/skills/:slug`); undefined when none did. */
  route: string | undefined;
  status: number;
  seconds: number | undefined;
}

export function requestContext(logger: Logger, bodyLimitBytes: number, pending?: PendingWork, observe?: (answered: Answered) => void) {
  return new Elysia({ name: 'request-context' })
    .onRequest(({ request, set }) => {
      startedAt.set(request, performance.now());
      if (pending) void pending.track(new Promise<void>((resolve) => logged.set(request, resolve)));
      const incoming = request.headers.get(REQUEST_ID_HEADER);
      set.headers[REQUEST_ID_HEADER] = incoming && INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID();
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > bodyLimitBytes) throw tooLarge(bodyLimitBytes);
      if (NUL_IN_URL.test(request.url)) throw nulRefused('URL');
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      if (!contentType) return; // no declared type: no route reads the body
      const bytes = await readLimitedBytes(request.body, bodyLimitBytes);
      if (bytes === undefined) throw tooLarge(bodyLimitBytes);
      if (/^multipart\/form-data$/i.test(contentType)) {
        return new Response(bytes, { headers: { 'content-type': request.headers.get('content-type') ?? '' } }).formData().catch(() => {
          throw malformed('expected valid multipart form data');
        });
      }
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw malformed('expected UTF-8 text');
      }
      if (/^application\/x-www-form-urlencoded$/i.test(contentType)) {
        if (NUL_IN_URL.test(text)) throw nulRefused('body');
        return Object.fromEntries(new URLSearchParams(text));
      }
      if (!JSON_TYPE.test(contentType)) return text;
      const parsed = parseGuardedJson(text);
      if (parsed.type === 'too-deep') throw malformed(parsed.message);
      if (parsed.type === 'invalid') throw malformed();
      if (parsed.nul || parsed.loneSurrogate) {
        const nul = parsed.nul;
        const field = fieldWith(parsed.value, nul ? (t) => t.includes('\0') : (t) => LONE_SURROGATE.test(t)) ?? 'body';
        const why = nul ? 'must not contain NUL characters' : 'must not contain unpaired UTF-16 surrogates (\\ud800 without its pair)';
        throw new AppError('VALIDATION', `Invalid request: field "${field}": ${why}`, [{ field, message: why }]);
      }
      // Every JSON body we take is an object; Elysia turns `[]`, `1` or `"x"` into `{}` for a schema
      // whose fields are all optional, so a wrong-typed body would pass as an empty update.
      if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
        throw new AppError('VALIDATION', 'Invalid request: the body must be a JSON object');
      }
      return parsed.value;
    })
    .onAfterResponse({ as: 'global' }, (context) => {
      const { request, set } = context;
      const began = startedAt.get(request);
      const ms = began === undefined ? undefined : performance.now() - began;
      const status = typeof set.status === 'number' ? set.status : 200;
      logger.info('request', {
        method: request.method,
        // A private key pasted into a path (e.g. DELETE /wallet/<key>) must not reach the log.
        path: requestPath(request.url).replace(/[0-9a-fA-F]{64}/g, '[redacted]'),
        status,
        ms: ms === undefined ? undefined : Math.round(ms * 10) / 10,
        requestId: set.headers[REQUEST_ID_HEADER],
      });
      // Elysia names the matched route's template; a request no route took has none.
      const route = (context as { route?: unknown }).route;
      observe?.({
        method: request.method,
        route: typeof route === 'string' && route !== '' ? route : undefined,
        status,
        seconds: ms === undefined ? undefined : ms / 1000,
      });
      logged.get(request)?.();
    });
}

/** The id given to the request being answered. */
export function requestIdOf(headers: Record<string, unknown>): string {
  const id = headers[REQUEST_ID_HEADER];
  return typeof id === 'string' ? id : 'unknown';
}
