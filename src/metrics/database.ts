import { Counter, Gauge, type Registry } from 'prom-client';
import type { DatabaseHandle } from '../db';

/**
 * The PostgreSQL pool's use, read from its counters at scrape time: its size, the statements in
 * flight (above the size, statements wait for a connection) and the statement deadlines passed
 * (each a 503 somewhere, or a background round that failed). None for the embedded database.
 */
export function databaseMetrics(registry: Registry, database: DatabaseHandle): void {
  const stats = database.stats;
  if (!stats) return;
  new Gauge({
    name: 'market_db_pool_size',
    help: 'Connections the PostgreSQL pools may open (primary and read replica together)',
    registers: [registry],
    collect() {
      this.set(stats.poolSize);
    },
  });
  new Gauge({
    name: 'market_db_statements_in_flight',
    help: 'Statements sent to PostgreSQL and not yet answered; above the pool size they wait for a connection',
    registers: [registry],
    collect() {
      this.set(stats.inFlight);
    },
  });
  let counted = 0;
  new Counter({
    name: 'market_db_deadline_hits_total',
    help: 'Statements (or waits for a connection) that passed the statement deadline and were answered as the database being unavailable',
    registers: [registry],
    collect() {
      // The pool counts; this counter catches up with it at each scrape.
      if (stats.deadlineHits > counted) this.inc(stats.deadlineHits - counted);
      counted = stats.deadlineHits;
    },
  });
}
