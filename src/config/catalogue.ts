import { type Env, readBoolean, readInteger } from './env';
import type { RunMode } from './modes';

/** Skill registration and analytics settings. */
export interface CatalogueConfig {
  /** Accept http:// skill endpoints (development); otherwise https is required. */
  allowHttpEndpoints: boolean;
  /** A view from one IP address counts once per skill within this many seconds. */
  viewWindowSeconds: number;
  /** New skills one creator may list in an hour (re-registrations and edits are not counted); 0: no limit. */
  newSkillsPerHour: number;
}

export function readCatalogueConfig(env: Env, mode: RunMode): CatalogueConfig {
  return {
    allowHttpEndpoints: readBoolean(env, 'MARKET_ALLOW_HTTP_ENDPOINTS', mode === 'development'),
    viewWindowSeconds: readInteger(env, 'ANALYTICS_VIEW_WINDOW', 3600, 1, 30 * 24 * 3600),
    newSkillsPerHour: readInteger(env, 'MARKET_NEW_SKILLS_PER_HOUR', 30, 0, 100_000),
  };
}
