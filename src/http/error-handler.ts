import { Elysia, type ValidationError } from 'elysia';
import { isDatabaseUnavailable } from '../db';
import type { Logger } from '../log';
import { AppError, type ErrorBody } from './errors';
import { requestPath } from 'skill-market/http';
import { requestIdOf } from './request-context';

/** What a client is told to wait when the database is unavailable. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * Maps every failure to one shape, `{error, code, requestId}`, with the right status. Our own
 * faults are logged with the request id and answered 500 without internals; a database that
 * cannot be reached is 503 `Service unavailable` with Retry-After (statements have a deadline, so
 * this comes within seconds).
 */
export function errorHandler(logger: Logger) {
  return new Elysia({ name: 'error-handler' }).onError({ as: 'global' }, ({ code, error, set, request }) => {
    const requestId = requestIdOf(set.headers);
    const reply = (status: number, body: Omit<ErrorBody, 'requestId'>) => {
      set.status = status;
      set.headers['content-type'] = 'application/json';
      return { ...body, requestId } satisfies ErrorBody;
    };
    // Errors thrown while parsing arrive wrapped in Elysia's ParseError.
    const own = error instanceof AppError ? error : 'cause' in error && error.cause instanceof AppError ? error.cause : undefined;
    if (own) {
      if (own.retryAfterSeconds !== undefined) set.headers['retry-after'] = String(own.retryAfterSeconds);
      return reply(own.status, { error: own.message, code: own.code, ...(own.details ? { details: own.details } : {}) });
    }
    switch (code) {
      case 'NOT_FOUND':
        return reply(404, { error: 'Not found', code: 'NOT_FOUND' });
      case 'PARSE':
        return reply(400, { error: 'Malformed request body: expected valid JSON', code: 'MALFORMED_BODY' });
      case 'VALIDATION':
        return reply(400, validationBody(error));
      case 'INVALID_COOKIE_SIGNATURE':
        return reply(401, { error: 'Invalid token', code: 'UNAUTHORIZED' });
    }
    if (isDatabaseUnavailable(error)) {
      logger.warn('database unavailable', { requestId, method: request.method, path: requestPath(request.url), error });
      set.headers['retry-after'] = String(RETRY_AFTER_SECONDS);
      return reply(503, { error: 'Service unavailable', code: 'UNAVAILABLE' });
    }
    const status = 'status' in error && typeof error.status === 'number' ? error.status : 500;
    if (status === 413) return reply(413, { error: 'Request body too large', code: 'PAYLOAD_TOO_LARGE' });
    logger.error('unhandled error', { requestId, method: request.method, path: requestPath(request.url), error });
    return reply(500, { error: 'Internal server error', code: 'INTERNAL' });
  });
}

/** "Invalid request: price must be …", naming the first field, with every problem in details. */
function validationBody(error: Readonly<ValidationError>): Omit<ErrorBody, 'requestId'> {
  const problems = error.all.map((e) => ({
    field: 'path' in e && e.path ? e.path.replace(/^\//, '').replaceAll('/', '.') : error.type,
    message: 'summary' in e && e.summary ? e.summary : e.message,
  }));
  // A schema's own `error` text (e.g. the facilitator request's) says it better than the field's;
  // an `{error, details}` of its own (a union that knows which branch was meant) says it all.
  const custom = error.customError;
  if (typeof custom === 'string') return { error: custom, code: 'VALIDATION', details: problems };
  if (isOwnProblem(custom)) return { error: custom.error, code: 'VALIDATION', details: custom.details };
  const first = problems[0];
  const where = error.type === 'body' ? '' : `${error.type} `;
  return {
    error: first ? `Invalid request: ${where}${first.field ? `field "${first.field}": ` : ''}${first.message}` : 'Invalid request',
    code: 'VALIDATION',
    details: problems,
  };
}

function isOwnProblem(value: unknown): value is { error: string; details: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { error?: unknown }).error === 'string' && 'details' in value;
}
