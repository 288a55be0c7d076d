/**
 * The consumer's payment pipeline and its scheme plug-ins: quote → choose scheme and terms →
 * sign (any {@link PaymentSigner}) → pay → verify the answer. scheme.ts holds the design; `exact`
 * is the scheme implemented. Published through `skill-market/client`.
 */
export { PaymentPipeline, type PaymentPipelineOptions, type PaymentCallOptions } from './pipeline';
export { UsedTrials } from './used-trials';
export type { PaidCall, PaymentQuote, Quote } from './call';
export { depositFor, type DepositInput } from './schemes/channel/deposit';
export { exactScheme, type ExactSchemeOptions } from './schemes/exact';
export { uptoScheme } from './schemes/upto';
export {
  channelScheme,
  createChannelReader,
  type ChannelScheme,
  type ChannelSchemeOptions,
  type ChannelPayload,
  type ChannelReader,
  type ChannelOnChain,
} from './schemes/channel';
export { fileChannelStore, memoryChannelStore, type ChannelRecord, type ChannelStore } from './schemes/channel/store';
export type {
  PaymentScheme,
  SchemeId,
  Terms,
  ChosenTerms,
  TermsPolicy,
  TermsProblem,
  CandidateContext,
  Acceptance,
  SignedPayment,
  SignContext,
  Refusal,
  RefusalVerdict,
  Settlement,
} from './scheme';
export {
  toPaymentSigner,
  eip1193Signer,
  type PaymentSigner,
  type PaymentTypedData,
  type TypedDataField,
  type Eip1193Requester,
  type WalletInput,
} from './signer';
export { checkInput } from './preflight';
export { readAllowedAssets, type AcceptedAsset } from './assets';
export { reasonOf, resultOf } from './answer';
export { chooseTerms, readOfferedTerms, type OfferedTerms } from './terms';
export {
  InputValidationError,
  TermsMismatchError,
  SpendingLimitError,
  SkillCallError,
  PaidCallError,
  ReceiptError,
  type TermsField,
} from './errors';
export type { ReceiptCheck, ReceiptMode } from './receipt-check';
export type { PaymentReceipt, CallResult, PaymentMode, AllowedAsset, SpendingSnapshot } from './types';
export { refundChannel, type RefundOptions, type RefundOutcome } from './schemes/channel/refund-door';
