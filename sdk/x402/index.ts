/**
 * x402 protocol module shared by the skill server, the consumer client and the facilitator:
 * prices, networks, payment terms, wire codecs (v1 and v2), EIP-3009 signing and recovery.
 * Web APIs and viem only: runs on Node 20+, Bun and browsers.
 *
 * @module skill-market/x402
 */
export { X402Error, isX402Error, FACILITATOR_REASONS, type X402ErrorCode, type FacilitatorReason } from './errors';
export { parsePrice, formatPrice, formatPriceUsd, USDC_DECIMALS, MAX_PRICE_UNITS, MAX_PRICE_ATOMIC } from './price';
export {
  BASE_MAINNET,
  BASE_SEPOLIA,
  KNOWN_NETWORKS,
  DEFAULT_NETWORK,
  parseCaip2,
  isCaip2Network,
  toCaip2,
  normalizeNetwork,
  toV1Name,
  getKnownNetwork,
  validateAsset,
  resolveAsset,
  type Caip2Network,
  type AssetInfo,
  type KnownNetwork,
} from './networks';
export { sameAddress, isUint256String, MAX_UINT256, type Address, type Hex } from './patterns';
export type {
  ResourceInfo,
  PaymentRequirements,
  AnyPaymentRequirements,
  PaymentRequired,
  Authorization,
  ExactEvmPayload,
  PaymentPayloadV1,
  PaymentPayloadV2,
  SettleResponse,
  PaymentRequiredBody,
} from './schemas';
/** TypeBox schemas of the wire objects, e.g. for route validation (prefer the parse* functions). */
export {
  RequirementsSchema,
  AnyRequirementsSchema,
  PaymentRequiredSchema,
  AuthorizationSchema,
  ExactPayloadSchema,
  PaymentPayloadV1Schema,
  PaymentPayloadV2Schema,
  SettleResponseSchema,
  PaymentRequiredBodySchema,
} from './schemas';
export { MAX_HEADER_LENGTH, encodeBase64Json, decodeBase64Json } from './base64';
export {
  parsePaymentRequirements,
  parsePaymentPayload,
  decodePaymentPayload,
  encodePaymentPayload,
  parsePaymentRequired,
  decodePaymentRequired,
  encodePaymentRequired,
  parseSettleResponse,
  decodeSettleResponse,
  encodeSettleResponse,
  type DecodedPayment,
} from './codec';
export {
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_SIGNATURE_HEADER,
  X_PAYMENT_HEADER,
  PAYMENT_RESPONSE_HEADER,
  X_PAYMENT_RESPONSE_HEADER,
  readPaymentHeader,
  readSettleResponseHeader,
  settleResponseHeaders,
  type HeaderReader,
  type PaymentHeaderResult,
  type SettleHeaderResult,
} from './headers';
export {
  DEFAULT_MAX_TIMEOUT_SECONDS,
  buildPaymentTerms,
  paymentRequiredResponse,
  acceptedMatches,
  paymentMatchesRequirements,
  type TermsInput,
  type PaymentTerms,
  type PaymentRequiredResponse,
} from './terms';
export { requirementsFromBody } from './body';
export {
  VALID_AFTER_SKEW_SECONDS,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  randomNonce,
  authorizationDomain,
  authorizationTypedData,
  createAuthorization,
  signAuthorization,
  recoverAuthorizationSigner,
  isSignedByPayer,
  splitSignature,
  type AuthorizationDomain,
  type AuthorizationTypedData,
  type TypedDataSigner,
  type AuthorizationOptions,
  type SignOptions,
} from './eip3009';
export {
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  MIN_WITHDRAW_DELAY,
  MAX_WITHDRAW_DELAY,
  batchSettlementDomain,
  channelConfigTypes,
  channelIdOf,
  claimBatchTypes,
  refundTypes,
  erc3009DepositNonce,
  receiveWithAuthorizationTypes,
  voucherDigest,
  voucherTypes,
  type ChannelConfig,
} from './batch-settlement';
export {
  createAuthorizationStateReader,
  USED_LOG_LOOKBACK_BLOCKS,
  type AuthorizationUse,
  type AuthorizationQuery,
  type AuthorizationStateReader,
  type AuthorizationStateOptions,
} from './authorization-state';
export {
  FacilitatorRequestSchema,
  VerifyResponseSchema,
  SupportedKindSchema,
  SupportedResponseSchema,
  SettlementStatusSchema,
  PaymentReceiptSchema,
  BatchReceiptSchema,
  SETTLEMENT_STATES,
  SETTLEMENT_MODES,
  SETTLEMENT_MODE_HEADER,
  RECEIPT_STATUSES,
  requirementsFromV1,
  requirementsToV1,
  facilitatorRequest,
  parseFacilitatorRequest,
  requestedNetwork,
  parseVerifyResponse,
  parseSupportedResponse,
  parseSettlementStatus,
  parseSettlementsAnswer,
  SettlementQuerySchema,
  SettlementsAnswerSchema,
  MAX_SETTLEMENT_QUERY,
  type SettlementQuery,
  type SettlementsAnswer,
  type FacilitatorRequest,
  type ParsedFacilitatorRequest,
  type ResourceHint,
  type VerifyResponse,
  type SupportedKind,
  type SupportedResponse,
  type SettlementStatus,
  type SettlementMode,
  type ReceiptStatus,
  type PaymentReceipt as FacilitatorReceipt,
  type BatchReceipt,
} from './facilitator';
