import { readDatabaseConfig, type DatabaseConfig } from './database';
import { type Env, readChoice, readHost, readInteger, readPort } from './env';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const RUN_MODES = ['development', 'production', 'test'] as const;
export type RunMode = (typeof RUN_MODES)[number];

/** Everything the registry reads from its environment, validated once at start. */
export interface RegistryConfig {
  mode: RunMode;
  host: string;
  port: number;
  database: DatabaseConfig;
  logLevel: LogLevel;
  /** Largest request body accepted, in bytes; larger ones are answered 413. */
  bodyLimitBytes: number;
}

export const REGISTRY_DEFAULTS = {
  host: '0.0.0.0',
  port: 3000,
  logLevel: 'info',
  bodyLimitBytes: 1024 * 1024,
} as const;

/**
 * Reads the registry configuration. Throws `ConfigError` naming the variable on a bad value.
 * `overrides` win over the environment (used by CLI flags and tests).
 */
export function loadRegistryConfig(env: Env, cwd = process.cwd(), overrides: Partial<RegistryConfig> = {}): RegistryConfig {
  return {
    mode: readChoice(env, 'NODE_ENV', RUN_MODES, 'development'),
    host: readHost(env, 'HOST', REGISTRY_DEFAULTS.host),
    port: readPort(env, 'PORT', REGISTRY_DEFAULTS.port),
    database: readDatabaseConfig(env, cwd),
    logLevel: readChoice(env, 'LOG_LEVEL', LOG_LEVELS, REGISTRY_DEFAULTS.logLevel),
    bodyLimitBytes: readInteger(env, 'MARKET_BODY_LIMIT', REGISTRY_DEFAULTS.bodyLimitBytes, 1024, 64 * 1024 * 1024),
    ...overrides,
  };
}
