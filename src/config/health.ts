import { type Env, readInteger } from './env';
import { readBoolean } from './env';
import type { RunMode } from './modes';

/** How the registry probes skill servers (`GET <server>/health`) to show which skills answer. */
export interface HealthConfig {
  /** Probe in the background at all; off in tests, which drive probes themselves. */
  enabled: boolean;
  /** Seconds between two probes of one server while it answers (at most this often). */
  intervalSeconds: number;
  /** Longest pause between probes of a server that keeps failing (the backoff doubles up to it). */
  maxBackoffSeconds: number;
  /** Longest wait for one probe's answer. */
  timeoutMs: number;
  /** Probes in flight at once (never more than one per host). */
  concurrency: number;
  /** A skill whose server has been down this long leaves default search results until it answers. */
  hideAfterSeconds: number;
  /**
   * Probe servers on loopback, private and link-local addresses. Off in production, where a
   * registered endpoint must not turn the registry into a probe of its own network (SSRF).
   */
  allowPrivateAddresses: boolean;
  /**
   * A listing goes public only once its server answered a health probe (spam that points at
   * nothing is never listed). On in production with probes on; off in development, where one's
   * own skills show at once, and in tests, which drive probes themselves.
   */
  listAfterFirstCheck: boolean;
}

export const HEALTH_DEFAULTS = {
  intervalSeconds: 180,
  maxBackoffSeconds: 1800,
  timeoutMs: 5000,
  concurrency: 4,
  hideAfterSeconds: 86_400,
  listAfterFirstCheck: false,
} as const;

export function readHealthConfig(env: Env, mode: RunMode): HealthConfig {
  const enabled = readBoolean(env, 'MARKET_HEALTH_PROBES', mode !== 'test');
  return {
    enabled,
    intervalSeconds: readInteger(env, 'MARKET_HEALTH_INTERVAL', HEALTH_DEFAULTS.intervalSeconds, 10, 86_400),
    maxBackoffSeconds: readInteger(env, 'MARKET_HEALTH_MAX_BACKOFF', HEALTH_DEFAULTS.maxBackoffSeconds, 10, 7 * 86_400),
    timeoutMs: readInteger(env, 'MARKET_HEALTH_TIMEOUT_MS', HEALTH_DEFAULTS.timeoutMs, 100, 60_000),
    concurrency: readInteger(env, 'MARKET_HEALTH_CONCURRENCY', HEALTH_DEFAULTS.concurrency, 1, 64),
    hideAfterSeconds: readInteger(env, 'MARKET_HEALTH_HIDE_AFTER', HEALTH_DEFAULTS.hideAfterSeconds, 60, 365 * 86_400),
    allowPrivateAddresses: readBoolean(env, 'MARKET_HEALTH_ALLOW_PRIVATE', mode === 'development'),
    // Without probes nothing would ever be checked: then listings are public at once unless the variable says otherwise.
    listAfterFirstCheck: readBoolean(env, 'MARKET_LIST_AFTER_FIRST_CHECK', mode === 'production' && enabled),
  };
}
