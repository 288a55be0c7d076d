import { Elysia } from 'elysia';
import type { Logger } from '../../log';
import { AppError } from '../errors';

export const REQUEST_ID_HEADER = 'x-request-id';
const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;
const startedAt = new WeakMap<Request, number>();

/**
 * Gives every request an id (a sane incoming `X-Request-Id` is kept, otherwise a new UUID),
 * echoes it on the response, refuses bodies over the limit (by Content-Length before reading,
 * and again while parsing JSON, which must be valid: an empty or broken body is never `{}`), and writes one
 * access-log line per request: method, path (never the query, which may carry tokens), status,
 * duration, request id.
 */
export function requestContext(logger: Logger, bodyLimitBytes: number) {
  return new Elysia({ name: 'request-context' })
    .onRequest(({ request, set }) => {
      startedAt.set(request, performance.now());
      const incoming = request.headers.get(REQUEST_ID_HEADER);
      set.headers[REQUEST_ID_HEADER] = incoming && INCOMING_ID.test(incoming) ? incoming : crypto.randomUUID();
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > bodyLimitBytes) {
        throw new AppError('PAYLOAD_TOO_LARGE', `Request body too large: the limit is ${bodyLimitBytes} bytes`);
      }
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      if (!/^application\/([a-z.+-]*\+)?json/i.test(contentType)) return;
      const raw = await request.arrayBuffer();
      if (raw.byteLength > bodyLimitBytes) {
        throw new AppError('PAYLOAD_TOO_LARGE', `Request body too large: the limit is ${bodyLimitBytes} bytes`);
      }
      try {
        return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw)) as unknown;
      } catch {
        throw new AppError('MALFORMED_BODY', 'Malformed request body: expected valid JSON');
      }
    })
    .onAfterResponse({ as: 'global' }, ({ request, set }) => {
      const began = startedAt.get(request);
      logger.info('request', {
        method: request.method,
        // A private key pasted into a path (e.g. DELETE /wallet/<key>) must not reach the log.
        path: new URL(request.url).pathname.replace(/[0-9a-fA-F]{64}/g, '[redacted]'),
        status: typeof set.status === 'number' ? set.status : 200,
        ms: began === undefined ? undefined : Math.round((performance.now() - began) * 10) / 10,
        requestId: set.headers[REQUEST_ID_HEADER],
      });
    });
}

/** The id given to the request being answered. */
export function requestIdOf(headers: Record<string, unknown>): string {
  const id = headers[REQUEST_ID_HEADER];
  return typeof id === 'string' ? id : 'unknown';
}
