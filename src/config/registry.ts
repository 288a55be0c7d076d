import { readAuthConfig, type AuthConfig } from './auth';
import { readChainConfig, readSkillNetworks, type ChainConfig } from './chain';
import type { Caip2Network } from 'skill-market/x402';
import { readCatalogueConfig, type CatalogueConfig } from './catalogue';
import { readDatabaseConfig, type DatabaseConfig } from './database';
import { readHealthConfig, type HealthConfig } from './health';
import { readMetricsConfig, type MetricsConfig } from './metrics';
import { readPaymentVerificationConfig, type PaymentVerificationConfig } from './payments';
import { type Env, readBoolean, readChoice, readHost, readHttpUrl, readInteger, readPort } from './env';
import { readRateLimits, readTrustedProxies, type RateLimitConfig } from './limits';
import { readModerationConfig, type ModerationConfig } from './moderation';

import { LOG_LEVELS, RUN_MODES, type LogLevel, type RunMode } from './modes';

/** Everything the registry reads from its environment, validated once at start. */
export interface RegistryConfig {
  mode: RunMode;
  host: string;
  port: number;
  /** The registry's public base URL (wallet sign-in messages name its host). */
  publicUrl: URL;
  database: DatabaseConfig;
  logLevel: LogLevel;
  /** Largest request body accepted, in bytes; larger ones are answered 413. */
  bodyLimitBytes: number;
  auth: AuthConfig;
  rateLimits: RateLimitConfig;
  /** Peers whose X-Forwarded-For is believed when finding a client's IP address. */
  trustedProxies: string[];
  /** Network, USDC contract and RPC for spending-wallet balances. */
  chain: ChainConfig;
  catalogue: CatalogueConfig;
  /** The operators (OPERATOR_ADDRESSES) and the report rate limit. */
  moderation: ModerationConfig;
  /**
   * How long a public discovery answer (a listing, a search page) may be served from the registry's
   * memory (READ_CACHE_MS, default 1000; 0 turns the cache off). It bounds how stale counters may
   * be; other changes reach every instance at once through NOTIFY.
   */
  readCacheMs: number;
  /** Background probes of skill servers. */
  health: HealthConfig;
  /** Background checks of reported payments on chain. */
  payments: PaymentVerificationConfig;
  /**
   * Where skills may be listed: the networks of MARKET_SKILL_NETWORKS, and those the facilitator at
   * MARKET_FACILITATOR_URL supports (its /supported); a skill on another network cannot be paid
   * and is refused. Neither set: any network.
   */
  skillNetworks?: { networks?: Caip2Network[]; facilitatorUrl?: URL };
  /** Send stored webhook deliveries in the background (MARKET_WEBHOOKS; off in tests, which drive rounds themselves). */
  webhooksEnabled: boolean;
  /**
   * How long one delivery attempt may take (MARKET_WEBHOOK_TIMEOUT_MS, default 5000), and how long
   * past it a taken delivery stays taken (MARKET_WEBHOOK_LEASE_MARGIN_MS, default 10 000): a
   * registry stopped mid-send has it sent again once both have passed.
   */
  webhookTimeoutMs: number;
  webhookLeaseMarginMs: number;
  /** Prometheus metrics: METRICS, METRICS_TOKEN, METRICS_PORT, METRICS_HOST (see {@link MetricsConfig}). */
  metrics: MetricsConfig;
  /** Set by `market dev` only: the pages offer the dev-only demo wallet. */
  devTools?: boolean;
}

/** A webhook delivery attempt's timeout and its lease's margin, ms (see {@link RegistryConfig}). */
export const WEBHOOK_DEFAULTS = { timeoutMs: 5000, leaseMarginMs: 10_000 } as const;

export const REGISTRY_DEFAULTS = {
  host: '0.0.0.0',
  port: 3000,
  logLevel: 'info',
  bodyLimitBytes: 1024 * 1024,
} as const;

/**
 * Reads the registry configuration. Throws `ConfigError` naming the variable on a bad value.
 * `overrides` win over the environment (used by tests).
 */
export function loadRegistryConfig(env: Env, cwd = process.cwd(), overrides: Partial<RegistryConfig> = {}): RegistryConfig {
  const mode = readChoice(env, 'NODE_ENV', RUN_MODES, 'development');
  const port = readPort(env, 'PORT', REGISTRY_DEFAULTS.port);
  const publicUrl = readHttpUrl(env, 'PUBLIC_URL') ?? new URL(`http://localhost:${port}`);
  const host = readHost(env, 'HOST', REGISTRY_DEFAULTS.host);
  return {
    mode,
    host,
    port,
    publicUrl,
    database: readDatabaseConfig(env, cwd),
    logLevel: readChoice(env, 'LOG_LEVEL', LOG_LEVELS, REGISTRY_DEFAULTS.logLevel),
    bodyLimitBytes: readInteger(env, 'MARKET_BODY_LIMIT', REGISTRY_DEFAULTS.bodyLimitBytes, 1024, 64 * 1024 * 1024),
    auth: readAuthConfig(env, mode, publicUrl),
    rateLimits: readRateLimits(env),
    trustedProxies: readTrustedProxies(env),
    chain: readChainConfig(env),
    catalogue: readCatalogueConfig(env, mode),
    moderation: readModerationConfig(env),
    readCacheMs: readInteger(env, 'READ_CACHE_MS', 1000, 0, 60_000),
    health: readHealthConfig(env, mode),
    payments: readPaymentVerificationConfig(env, mode),
    webhooksEnabled: readBoolean(env, 'MARKET_WEBHOOKS', mode !== 'test'),
    webhookTimeoutMs: readInteger(env, 'MARKET_WEBHOOK_TIMEOUT_MS', WEBHOOK_DEFAULTS.timeoutMs, 100, 60_000),
    webhookLeaseMarginMs: readInteger(env, 'MARKET_WEBHOOK_LEASE_MARGIN_MS', WEBHOOK_DEFAULTS.leaseMarginMs, 100, 600_000),
    metrics: readMetricsConfig(env, mode, host),
    ...skillNetworksOf(env),
    ...overrides,
  };
}

function skillNetworksOf(env: Env): Pick<RegistryConfig, 'skillNetworks'> {
  const networks = readSkillNetworks(env);
  const facilitatorUrl = readHttpUrl(env, 'MARKET_FACILITATOR_URL');
  if (!networks && !facilitatorUrl) return {};
  return { skillNetworks: { ...(networks ? { networks } : {}), ...(facilitatorUrl ? { facilitatorUrl } : {}) } };
}
