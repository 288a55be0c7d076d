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

/**
 * The servers' metrics settings; `prefix` names those of another server in the same environment
 * (`market serve` reads MARKET_METRICS, MARKET_METRICS_TOKEN, MARKET_METRICS_PORT, MARKET_METRICS_HOST).
 */
export function readMetricsConfig(env: Env, mode: RunMode, host: string, prefix = ''): MetricsConfig {
  const name = (key: string) => `${prefix}${key}`;
  const token = read(env, name('METRICS_TOKEN'));
  if (token !== undefined && (token.length < 16 || /\s/.test(token))) {
    throw new ConfigError(name('METRICS_TOKEN'), 'must be at least 16 characters without spaces');
  }
  const port = read(env, name('METRICS_PORT')) === undefined ? undefined : readPort(env, name('METRICS_PORT'), 0);
  const configured = token !== undefined || port !== undefined;
  const enabled = readBoolean(env, name('METRICS'), configured || mode !== 'production');
  return {
    enabled,
    ...(token !== undefined ? { token } : {}),
    ...(port !== undefined ? { listener: { host: readHost(env, name('METRICS_HOST'), host), port } } : {}),
  };
}

/**
 * `market serve`'s metrics: opt-in. On with `--dev` (the servers of `market dev`) or NODE_ENV
 * development or test; otherwise (NODE_ENV unset or production) only when MARKET_METRICS_TOKEN,
 * MARKET_METRICS_PORT or MARKET_METRICS=true says so.
 */
export function readSkillServerMetricsConfig(env: Env, dev: boolean, host: string): MetricsConfig {
  // Any other NODE_ENV (unset, `staging`, …) is production here: a skill server never refuses to start over it.
  const named = read(env, 'NODE_ENV');
  const mode: RunMode = dev ? 'development' : named === 'development' || named === 'test' ? named : 'production';
  return readMetricsConfig(env, mode, host, 'MARKET_');
}

/** Metrics served on the server's own port to anyone: `market dev` and tests. */
export const OPEN_METRICS: MetricsConfig = { enabled: true };
