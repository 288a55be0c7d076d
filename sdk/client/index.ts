/**
 * The consumer client: discover skills and call them, paying per call with x402 (USDC, EIP-3009)
 * under limits the caller sets. Web APIs, viem and the shared x402 codec only: runs on Node 20+,
 * Bun and browsers.
 *
 * @module skill-market/client
 */
export { SkillMarket } from './market';
export { usageRecordOf } from './usage';
export { MarketError, RegistryError, type MarketErrorCode, type ChargeState } from '../http/errors';
export type {
  Skill,
  Group,
  SearchFilters,
  SearchPage,
  CallOptions,
  ChannelView,
  ChannelRefund,
  FetchLike,
  SkillMarketOptions,
} from './types';
export type { DiscoveredSkill, CatalogueProblem } from './catalogues';
// The payment pipeline SkillMarket.call runs, for clients that pay through another signer (a web
// page asking the visitor's wallet), with its schemes, signers, errors and data shapes, and the
// building blocks of reading a 402's terms, checking them against the listing, and reading the answer.
export {
  PaymentPipeline,
  exactScheme,
  channelScheme,
  createChannelReader,
  fileChannelStore,
  memoryChannelStore,
  refundChannel,
  type RefundOptions,
  type RefundOutcome,
  type ChannelScheme,
  type ChannelSchemeOptions,
  type ChannelPayload,
  type ChannelReader,
  type ChannelOnChain,
  type ChannelRecord,
  type ChannelStore,
  toPaymentSigner,
  eip1193Signer,
  InputValidationError,
  TermsMismatchError,
  SpendingLimitError,
  SkillCallError,
  PaidCallError,
  ReceiptError,
  type ReceiptCheck,
  type ReceiptMode,
  checkInput,
  readAllowedAssets,
  reasonOf,
  resultOf,
  chooseTerms,
  readOfferedTerms,
  type PaymentPipelineOptions,
  type PaymentCallOptions,
  type PaidCall,
  type Quote,
  type PaymentQuote,
  depositFor,
  type DepositInput,
  type ExactSchemeOptions,
  type PaymentScheme,
  type SchemeId,
  type Terms,
  type TermsProblem,
  type CandidateContext,
  type Acceptance,
  type SignedPayment,
  type SignContext,
  type Refusal,
  type RefusalVerdict,
  type Settlement,
  type PaymentSigner,
  type PaymentTypedData,
  type TypedDataField,
  type Eip1193Requester,
  type WalletInput,
  type TermsField,
  type AcceptedAsset,
  type ChosenTerms,
  type OfferedTerms,
  type TermsPolicy,
  type PaymentReceipt,
  type CallResult,
  type PaymentMode,
  type AllowedAsset,
  type SpendingSnapshot,
} from '../payment/index';
export type { Answer } from '../http/exchange';
