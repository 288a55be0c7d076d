import { ConfigError, type Env, read, readBoolean, readHost, readPort } from './env';
import type { RunMode } from './modes';

/**
 * Where and to whom a server shows its Prometheus metrics (`GET /metrics`).
 *
 * - `METRICS_PORT` set: on a listener of their own on that port (`METRICS_HOST`, default the
 *   server's HOST), and never on the server's own port. A port a firewall keeps private.
 * - `METRICS_TOKEN` set: only to `Authorization: Bearer <token>` (compared in constant time); a
 *   request without it, or with another, is answered 401.
 * - Neither: on the server's own port, to anyone, in development and tests (`market dev`); not at
 *   all in production (404), unless `METRICS=true` says so (a registry reached through a private
 *   network only). `METRICS=false` turns them off everywhere.
 */
export interface MetricsConfig {
  /** Serve /metrics at all. */
  enabled: boolean;
  /** The bearer token a scrape must present; none: any scrape that reaches the listener is answered. */
  token?: string;
  /** A listener of their own; none: on the server's own port. */
  listener?: { host: string; port: number };
}

export function readMetricsConfig(env: Env, mode: RunMode, host: string): MetricsConfig {
  const token = read(env, 'METRICS_TOKEN');
  if (token !== undefined && (token.length < 16 || /\s/.test(token))) {
    throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters without spaces');
  }
  const port = read(env, 'METRICS_PORT') === undefined ? undefined : readPort(env, 'METRICS_PORT', 0);
  const configured = token !== undefined || port !== undefined;
  const enabled = readBoolean(env, 'METRICS', configured || mode !== 'production');
  return {
    enabled,
    ...(token !== undefined ? { token } : {}),
    ...(port !== undefined ? { listener: { host: readHost(env, 'METRICS_HOST', host), port } } : {}),
  };
}

/** Metrics served on the server's own port to anyone: `market dev` and tests. */
export const OPEN_METRICS: MetricsConfig = { enabled: true };
