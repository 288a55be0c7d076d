export { ConfigError, read, readPort, type Env } from './env';
export { readDatabaseConfig, DEFAULT_DATA_DIR, type DatabaseConfig } from './database';
export { readAuthConfig, AUTH_DEFAULTS, type AuthConfig } from './auth';
export { readPaymentVerificationConfig, PAYMENT_VERIFICATION_DEFAULTS, type PaymentVerificationConfig } from './payments';
export { readHealthConfig, HEALTH_DEFAULTS, type HealthConfig } from './health';
export { readCatalogueConfig, readBoolean, type CatalogueConfig } from './catalogue';
export { readRateLimits, RATE_LIMIT_DEFAULTS, type RateLimitConfig, type RateRule } from './limits';
export {
  loadRegistryConfig,
  REGISTRY_DEFAULTS,
  LOG_LEVELS,
  RUN_MODES,
  type LogLevel,
  type RegistryConfig,
  type RunMode,
} from './registry';
export { loadFacilitatorConfig, FACILITATOR_DEFAULTS, type FacilitatorConfig } from './facilitator';
export {
  readConfigDir,
  readRegistryConnection,
  checkRegistryUrl,
  readClientChain,
  readWalletKey,
  readKeystorePassphrase,
  readKeystorePath,
  readServeEnv,
  readDevDir,
  type RegistryConnection,
  type ConnectionFlags,
  type ClientChain,
  type ServeEnv,
} from './client';
