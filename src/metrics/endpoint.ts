/**
 * `GET /metrics`: the Prometheus text format of one server's registry, to whom its configuration
 * allows (config/metrics.ts). It is an operator's route, not part of the API: hidden from the
 * OpenAPI document and the route table, as /openapi.json is.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Elysia } from 'elysia';
import type { Registry } from 'prom-client';
import type { MetricsConfig } from '../config';
import type { Logger } from '../log';
import { AppError, listen, serverBase } from '../http';

const METRICS_PATH = '/metrics';

const hidden = { detail: { hide: true } } as const;
const digest = (text: string) => createHash('sha256').update(text).digest();

/** The route: the exposition to a scrape presenting `token` (any scrape when none), 404 when `served` is false. */
function exposition(registry: Registry, served: boolean, token: string | undefined) {
  const expected = token === undefined ? undefined : digest(token);
  return new Elysia().get(
    METRICS_PATH,
    async ({ headers, set }) => {
      if (!served) throw new AppError('NOT_FOUND', 'Not found');
      if (expected) {
        const presented = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
        set.headers['www-authenticate'] = 'Bearer realm="metrics"';
        if (!presented) throw new AppError('UNAUTHORIZED', 'Authentication required');
        // Digests of equal length, compared in constant time: the time taken says nothing of the token.
        if (!timingSafeEqual(digest(presented), expected)) throw new AppError('UNAUTHORIZED', 'Invalid token');
        delete set.headers['www-authenticate'];
      }
      return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType, 'cache-control': 'no-store' } });
    },
    hidden,
  );
}

/**
 * `/metrics` on the server's own port: served when enabled without a listener of its own, else
 * answered 404 (so the route exists either way and never falls through to a page).
 */
export function metricsRoute(registry: Registry, config: MetricsConfig) {
  return exposition(registry, config.enabled && !config.listener, config.token);
}

export interface MetricsListener {
  url: string;
  stop(): Promise<void>;
}

/** The listener of its own (`METRICS_PORT`) when configured; undefined otherwise. */
export function listenMetrics(registry: Registry, config: MetricsConfig, logger: Logger): MetricsListener | undefined {
  if (!config.enabled || !config.listener) return undefined;
  const app = serverBase('metrics', logger, 1024).use(exposition(registry, true, config.token));
  const url = listen(app, config.listener.host, config.listener.port);
  logger.info('metrics listening', { url: `${url}${METRICS_PATH}` });
  return {
    url,
    stop: async () => {
      await app.stop();
    },
  };
}
