/**
 * The consumer client: discover skills and call them, paying per call with x402 (USDC, EIP-3009)
 * under limits the caller sets. Web APIs, viem and the shared x402 codec only: runs on Node 20+,
 * Bun and browsers.
 *
 * @module skill-market/client
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
// Building blocks of `call()` for clients that pay through another signer, such as a web page
// asking the visitor's wallet: read a 402's terms, check them against the listing, read the answer.
export { checkInput } from './preflight';
export { readAllowedAssets, type AcceptedAsset } from './assets';
export { reasonOf, resultOf } from './answer';
export { chooseTerms, readOfferedTerms, type ChosenTerms, type OfferedTerms, type TermsPolicy } from './terms';
export type { Answer } from '../http/exchange';
