/**
 * Prometheus metrics (prom-client): each server instance keeps its own `Registry` (never the
 * library's global one), so tests and several servers in one process count apart. Shared here:
 * HTTP request counting, the `/metrics` route and its own listener, gauges read at scrape time,
 * and the database pool's use. The registry and the facilitator add their own (their metrics.ts).
 */
export { Registry } from 'prom-client';
export { httpMetrics, LATENCY_BUCKETS, UNMATCHED_ROUTE } from './http';
export { listenMetrics, METRICS_PATH, metricsRoute, type MetricsListener } from './endpoint';
export { cachedReading, READING_MAX_AGE_MS, readingCollector, type Reading } from './reading';
export { databaseMetrics } from './database';
