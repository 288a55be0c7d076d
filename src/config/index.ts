export { ConfigError, type Env } from './env';
export { readDatabaseConfig, DEFAULT_DATA_DIR, type DatabaseConfig } from './database';
export {
  loadRegistryConfig,
  REGISTRY_DEFAULTS,
  LOG_LEVELS,
  RUN_MODES,
  type LogLevel,
  type RegistryConfig,
  type RunMode,
} from './registry';
