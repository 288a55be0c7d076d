/**
 * The consumer client: discover skills and call them, paying per call with x402 (USDC, EIP-3009)
 * under limits the caller sets. Web APIs, viem and the shared x402 codec only: runs on Node 20+,
 * Bun and browsers.
 */
export { SkillMarket } from './market';
export {
  MarketError,
  RegistryError,
  InputValidationError,
  TermsMismatchError,
  SpendingLimitError,
  SkillCallError,
  type MarketErrorCode,
  type ChargeState,
  type TermsField,
} from './errors';
export type {
  Skill,
  Group,
  SearchFilters,
  SearchPage,
  PaymentReceipt,
  CallResult,
  CallOptions,
  PaymentMode,
  AllowedAsset,
  WalletInput,
  FetchLike,
  SkillMarketOptions,
  SpendingSnapshot,
} from './types';
