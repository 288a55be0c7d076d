export { ConfigError, read, readPort, type Env } from './env';
export type { DatabaseConfig } from './database';
export type { AuthConfig } from './auth';
export { readPaymentVerificationConfig, PAYMENT_VERIFICATION_DEFAULTS, type PaymentVerificationConfig } from './payments';
export { readHealthConfig, HEALTH_DEFAULTS, type HealthConfig } from './health';
export type { RateLimitConfig, RateRule } from './limits';
export { readTrustedProxies } from './limits';
export { loadRegistryConfig, REGISTRY_DEFAULTS, type RegistryConfig, WEBHOOK_DEFAULTS } from './registry';
export { readChannelsFromBlock } from './chain';
export type { LogLevel } from './modes';
export { loadFacilitatorConfig, deriveAuthorizerKey, FACILITATOR_DEFAULTS, type FacilitatorConfig, type ReceiverKey } from './facilitator';
export {
  readConfigDir,
  defaultKeystorePath,
  readRegistryConnection,
  checkRegistryUrl,
  readClientChain,
  readDiscovery,
  readWalletKey,
  readKeystorePassphrase,
  readKeystorePath,
  readServeEnv,
  readDevDir,
} from './client';
export { readMetricsConfig, readSkillServerMetricsConfig, OPEN_METRICS, type MetricsConfig } from './metrics';
