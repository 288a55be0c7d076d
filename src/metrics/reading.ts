/**
 * Gauges read from the database when scraped: each reading is taken at most once per `maxAgeMs`
 * (scrapes of several Prometheus servers, or of one retrying, share it) and concurrent scrapes
 * wait for the same one. A reading that fails is not kept: the next scrape asks again.
 */
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../log';

/** How long a database reading serves scrapes by default. */
export const READING_MAX_AGE_MS = 5_000;

export type Reading<T> = () => Promise<T>;

export function cachedReading<T>(read: () => Promise<T>, maxAgeMs: number): Reading<T> {
  let cached: { at: number; value: Promise<T>; done: boolean } | undefined;
  return () => {
    const now = performance.now();
    // A reading under way is shared whatever its age: the gauges of one scrape collect side by side.
    if (!cached || (cached.done && now - cached.at >= maxAgeMs)) {
      const entry = { at: now, value: read(), done: false };
      cached = entry;
      entry.value.then(
        () => {
          entry.done = true;
        },
        () => {
          if (cached === entry) cached = undefined;
        },
      );
    }
    return cached.value;
  };
}

/**
 * The `collect` of gauges set from readings at scrape time. A failed reading leaves its gauge
 * without samples (so an alert on `absent()` fires rather than one on a stale value), is counted
 * in `market_metrics_reading_errors_total{metric}` and logged; the rest of the scrape is answered.
 *
 * @example new Gauge({ name, help, registers: [registry], collect: collector('market_webhook_backlog', backlog, (gauge, b) => gauge.set(b.pending)) })
 */
export function readingCollector(registry: Registry, logger: Logger) {
  const errors = new Counter({
    name: 'market_metrics_reading_errors_total',
    help: 'Readings for gauges that failed at scrape time (the gauge has no sample then), by metric',
    labelNames: ['metric'] as const,
    registers: [registry],
  });
  return <T, G extends { reset(): void }>(metric: string, reading: Reading<T>, apply: (gauge: G, value: T) => void) =>
    async function collect(this: G): Promise<void> {
      try {
        const value = await reading();
        this.reset();
        apply(this, value);
      } catch (error) {
        this.reset();
        errors.inc({ metric });
        logger.warn('a metrics reading failed', { metric, error: String(error).slice(0, 200) });
      }
    };
}
