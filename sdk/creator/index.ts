/**
 * `skill-market/creator`: sell skills per call for USDC with x402.
 *
 * - {@link skill}: define a paid skill (price, schemas, groups, timeout) — checked at once.
 * - {@link serve}: run the skill server (`POST /<name>` paid, `GET /health`), register the
 *   skills and report settled calls to the registry.
 * - {@link register} / {@link updateSkill}: the registry calls on their own.
 * - {@link createSkillHandler}: the server as a fetch-style `(Request) => Promise<Response>`.
 *
 * Runs on Bun and on Node 20+.
 *
 * @example
 * import { serve, skill } from 'skill-market/creator';
 *
 * const wordCount = skill(
 *   { price: '$0.001', description: 'Counts words', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, groups: ['text'] },
 *   ({ text }: { text: string }) => ({ words: text.split(/\s+/).filter(Boolean).length }),
 * );
 * await serve({ wordCount }, { register: { endpoint: 'https://skills.example.com' } });
 * // wallet from MARKET_WALLET_ADDRESS, API key from MARKET_API_KEY
 *
 * @module skill-market/creator
 */
export {
  skill,
  isSkill,
  DEFAULT_SKILL_TIMEOUT_MS,
  MAX_SKILL_TIMEOUT_MS,
  type Skill,
  type Skills,
  type SkillOptions,
  type SkillHandler,
  type SkillContext,
  type Trial,
  type TierStep,
} from './skill';
export { serve, DEFAULT_PORT, type ServeOptions, type RegistrationOptions, type SkillServer } from './serve';
export {
  createSkillHandler,
  DEFAULT_APP_NAME,
  DEFAULT_FACILITATOR_URL,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_HOLD_MS,
  type SkillHandlerOptions,
  type SkillRequestHandler,
  type Peer,
  type TrialOptions,
} from './handler';
export type { TrialStore, TrialUse, TrialTake } from './plans/store';
export type { Period } from './plans/period';
export {
  register,
  mergeGroups,
  DEFAULT_API_URL,
  DEFAULT_REGISTRATION_CONCURRENCY,
  type RegisterOptions,
  type RegistrationResult,
} from './register';
export { DEFAULT_NETWORK } from '../x402/index';
export { bazaarExtension, type BazaarExtension } from './discovery/bazaar';
export type { OpenApiContact, OpenApiOptions } from './discovery/publish';
export { updateSkill, type SkillUpdate, type UpdateOptions } from './update';
export type { SettledCall } from './scheme';
export type { ChannelBacklog, ObservedCall, ObservedSettlement, ServerObserver } from './observer';
export type { TrackingOptions } from './tracker';
export type { LedgerOptions } from './schemes/exact/ledger';
export { DEFAULT_SETTLEMENT, type SettlementOption } from './schemes/exact/exposure';
export {
  DEFAULT_CHANNEL_THRESHOLD,
  DEFAULT_WITHDRAW_DELAY,
  DEFAULT_SETTLE_WITHIN_MS,
  DEFAULT_CHANNELS_DIR,
  type ChannelOption,
  type ChannelSettingsInput,
} from './schemes/channel/settings';
export {
  memoryChannelStore,
  keyedMutex as keyedChannelLock,
  type ChannelStore,
  type ChannelState,
  type ChannelChange,
  type UpdateHint,
  type StoredAnswer,
  type UnreportedCalls,
} from './schemes/channel/store';
export { fileChannelStore, type FileStoreOptions } from './schemes/channel/file-store';
export { hostedChannelStore, type HostedStoreOptions } from './schemes/channel/hosted-store';
export { voucherSignedBy } from './schemes/channel/voucher-check';
export type { ClaimRound } from './schemes/channel/claims';
export { VERIFY_MODES, type VerifyMode } from './schemes/exact/payers';
export { EXPOSED_HEADERS as CORS_EXPOSED_HEADERS, type CorsOption } from './cors';
export { RegistryError, type RetryOptions } from '../registry/index';
export type { CreatorLogger } from './logger';
export type { Env } from './settings';
export {
  SkillDefinitionError,
  ServeConfigError,
  RegistrationError,
  FacilitatorUnavailableError,
  SkillTimeoutError,
  ChannelStoreDamagedError,
} from './errors';
