import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * What the registry last saw of each skill server (`GET <server>/health`), one row per server
 * however many skills it serves. `status` is `unknown` until a probe has an answer (or when
 * probing it was refused), then `up` or `down`. `next_probe_at` is also a lease: a prober claims a
 * due server by moving it forward, so two registry instances never probe one server at once.
 */
export const serverHealth = pgTable(
  'server_health',
  {
    serverUrl: text('server_url').primaryKey(),
    host: text('host').notNull(),
    status: text('status', { enum: ['unknown', 'up', 'down'] })
      .notNull()
      .default('unknown'),
    latencyMs: integer('latency_ms'),
    /** Failed probes in a row; the backoff doubles with each. */
    failures: integer('failures').notNull().default(0),
    lastError: text('last_error'),
    lastCheckedAt: timestamp('last_checked_at', { withTimezone: true }),
    lastUpAt: timestamp('last_up_at', { withTimezone: true }),
    /** Start of the current outage; null while up. */
    downSince: timestamp('down_since', { withTimezone: true }),
    nextProbeAt: timestamp('next_probe_at', { withTimezone: true }).notNull(),
    /** Share of the last week the server answered (each probe stands for the time since the one before), parts per million; null before a probe. */
    uptimePpm: integer('uptime_ppm'),
    /** Share of the recent probes answered (each probe weighs 1/8, the older ones the rest), parts per million; null before a probe. */
    recentSuccessPpm: integer('recent_success_ppm'),
    /** Response time of the recent successful probes (each weighs 1/8), milliseconds; null before one. */
    latencyAvgMs: integer('latency_avg_ms'),
    /** What each skill's 402 asks, by skill name, as the server's last /health said (null: it did not say). */
    offers: jsonb('offers').$type<Record<string, unknown[]>>(),
  },
  (t) => [index('server_health_next_probe_idx').on(t.nextProbeAt)],
);
