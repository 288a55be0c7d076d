import { ConfigError, type Env, read, readInteger } from './env';
import type { RunMode } from './registry';

/** Skill registration and analytics settings. */
export interface CatalogueConfig {
  /** Accept http:// skill endpoints (development); otherwise https is required. */
  allowHttpEndpoints: boolean;
  /** A view from one IP address counts once per skill within this many seconds. */
  viewWindowSeconds: number;
}

export function readCatalogueConfig(env: Env, mode: RunMode): CatalogueConfig {
  return {
    allowHttpEndpoints: readBoolean(env, 'MARKET_ALLOW_HTTP_ENDPOINTS', mode === 'development'),
    viewWindowSeconds: readInteger(env, 'ANALYTICS_VIEW_WINDOW', 3600, 1, 30 * 24 * 3600),
  };
}

export function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}
