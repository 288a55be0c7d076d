/**
 * Prometheus metrics (prom-client): each server instance keeps its own `Registry` (never the
 * library's global one), so tests and several servers in one process count apart. Shared here:
 * HTTP request counting, the `/metrics` route and its own listener, gauges read at scrape time,
 * and the database pool's use. The registry and the facilitator add their own (their metrics.ts).
 */
export { httpMetrics, LATENCY_BUCKETS } from './http';
export { listenMetrics, metricsRoute, type MetricsListener } from './endpoint';
export { cachedReading, READING_MAX_AGE_MS, readingCollector } from './reading';
export { databaseMetrics } from './database';
