/**
 * Listening: the options every server of ours gives Bun, and one way to start one and learn its
 * local URL, used by `market registry` and `market facilitator` alike.
 */
import { Elysia, type AnyElysia } from 'elysia';
import type { Logger } from '../log';
import type { PendingWork } from '../runtime/pending';
import { errorHandler } from './error-handler';
import { type Answered, requestContext } from './request-context';
import { securityHeaders, type SecurityHeaderOptions } from './security-headers';

/**
 * The body limit to give the listener (Bun.serve): none of its own. Bun answers bodies over its
 * limit itself with an empty 413 (no error shape, no request id); request-context refuses them
 * instead, by Content-Length before reading and by counting while reading, so nothing is buffered.
 */
const LISTENER_BODY_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * Options for the listener of a server built on these plugins: no body limit of its own (above),
 * and never Bun's development error page, which would send the working directory and source
 * lines to the client should anything escape the error handler. With development off Bun shares
 * a port already in use unless reusePort is said false: a second server must fail EADDRINUSE.
 */
export const LISTENER_OPTIONS = { maxRequestBodySize: LISTENER_BODY_LIMIT, development: false, reusePort: false } as const;

/** What a server may add to its base. */
export interface ServerExtras {
  /** Elysia's options (e.g. a `seed` telling apart two instances mounted in one app). */
  options?: ConstructorParameters<typeof Elysia>[0];
  /** Tracks the access-log lines written after each answer; tests await it. */
  pending?: PendingWork;
  security?: SecurityHeaderOptions;
  /** Told of each request answered, when its access-log line is written (the metrics count them). */
  observe?: (answered: Answered) => void;
}

/**
 * The base of a server: the security headers of every answer, request ids, the access log, the
 * body limit and the JSON guard (request-context), then one error shape for every failure
 * (error-handler). Routes go on top.
 */
export function serverBase(name: string, logger: Logger, bodyLimitBytes: number, extras: ServerExtras = {}) {
  return new Elysia({ ...extras.options, name })
    .use(securityHeaders(extras.security ?? {}))
    .use(requestContext(logger, bodyLimitBytes, extras.pending, extras.observe))
    .use(errorHandler(logger));
}

/** Starts `app` on host:port; answers the URL to reach it from this machine. */
export function listen(app: AnyElysia, host: string, port: number): string {
  app.listen({ hostname: host, port, ...LISTENER_OPTIONS });
  const server = app.server;
  if (!server) throw new Error('the server did not start listening');
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${server.port}`;
}
