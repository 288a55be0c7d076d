/**
 * Counting the HTTP requests a server answers: by method, route template (`/skills/:slug`, never
 * the URL asked, so the label's values stay few) and status, with their duration. Told of each
 * answer by the server base's request context (serverBase's `observe`), as its access log is.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Answered } from '../http';

/** Seconds: from a cached read (milliseconds) to a slow chain settlement. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** The route label of a request no route took (a 404, or refused before routing). */
const UNMATCHED_ROUTE = 'unmatched';

/** The observer that counts each request answered into `registry`. */
export function httpMetrics(registry: Registry): (answered: Answered) => void {
  const requests = new Counter({
    name: 'market_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'market_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  return ({ method, route, status, seconds }) => {
    const labels = { method: METHODS.has(method) ? method : 'OTHER', route: route ?? UNMATCHED_ROUTE };
    requests.inc({ ...labels, status: String(status) });
    if (seconds !== undefined) duration.observe(labels, seconds);
  };
}
