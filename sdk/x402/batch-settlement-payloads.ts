/**
 * The wire objects of the x402 `batch-settlement` scheme (payment channels) on EVM, with strict
 * parsers: what a client pays with (`deposit`, `voucher`, `refund`), what a resource server sends a
 * facilitator's `/verify` and `/settle` (those three, plus `claim`, `settle` and the `refund` it
 * completed with nonce, claims and authorizer signatures), the channel snapshot a facilitator
 * answers with, the PAYMENT-RESPONSE `extra` and the corrective 402's `extra.channelState` /
 * `extra.voucherState`. Shapes match `@x402/evm` 2.27 (client, server and facilitator).
 *
 * Amounts are canonical decimal strings bounded by the contract's types (uint128 amounts, uint256
 * nonces); `withdrawDelay` and `withdrawRequestedAt` are JSON numbers, as the reference sends them.
 * A bad object throws {@link BatchSettlementPayloadError}: an X402Error (`malformed_payment`) whose
 * `reason` is the spec's error code (e.g. `invalid_batch_settlement_evm_voucher_payload`).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { MAX_WITHDRAW_DELAY, MIN_WITHDRAW_DELAY, type ChannelConfig } from './batch-settlement';
import { X402Error } from './errors';
import { ADDRESS_PATTERN, BYTES32_PATTERN, HEX_BYTES_PATTERN, UINT_PATTERN, type Address, type Hex } from './patterns';

/**
 * The scheme's name in requirements, payloads and `/supported`.
 *
 * @example const offer = accepts.find((a) => a.scheme === BATCH_SETTLEMENT_SCHEME);
 */
export const BATCH_SETTLEMENT_SCHEME = 'batch-settlement';

/**
 * Largest uint128 (the contract's amounts: balances, vouchers, claims, deposits, refunds).
 *
 * @example if (BigInt(voucher.maxClaimableAmount) > MAX_UINT128) throw new Error('amount out of range');
 */
export const MAX_UINT128 = 2n ** 128n - 1n;

/**
 * The spec's reason codes of the scheme (`invalidReason` of /verify, `errorReason` of /settle),
 * the subset this project produces or checks. Treat them as opaque strings on the wire.
 *
 * @example
 * if (verified.invalidReason === BATCH_SETTLEMENT_REASONS.cumulativeExceedsBalance) topUp();
 */
export const BATCH_SETTLEMENT_REASONS = {
  scheme: 'invalid_batch_settlement_evm_scheme',
  networkMismatch: 'invalid_batch_settlement_evm_network_mismatch',
  payloadType: 'invalid_batch_settlement_evm_payload_type',
  depositPayload: 'invalid_batch_settlement_evm_deposit_payload',
  voucherPayload: 'invalid_batch_settlement_evm_voucher_payload',
  refundPayload: 'invalid_batch_settlement_evm_refund_payload',
  claimPayload: 'invalid_batch_settlement_evm_claim_payload',
  settlePayload: 'invalid_batch_settlement_evm_settle_payload',
  missingEip712Domain: 'invalid_batch_settlement_evm_missing_eip712_domain',
  channelIdMismatch: 'invalid_batch_settlement_evm_channel_id_mismatch',
  tokenMismatch: 'invalid_batch_settlement_evm_token_mismatch',
  receiverMismatch: 'invalid_batch_settlement_evm_receiver_mismatch',
  receiverAuthorizerMismatch: 'invalid_batch_settlement_evm_receiver_authorizer_mismatch',
  authorizerAddressMismatch: 'invalid_batch_settlement_evm_authorizer_address_mismatch',
  withdrawDelayMismatch: 'invalid_batch_settlement_evm_withdraw_delay_mismatch',
  withdrawDelayOutOfRange: 'invalid_batch_settlement_evm_withdraw_delay_out_of_range',
  voucherSignature: 'invalid_batch_settlement_evm_voucher_signature',
  channelNotFound: 'invalid_batch_settlement_evm_channel_not_found',
  channelBusy: 'invalid_batch_settlement_evm_channel_busy',
  channelStateReadFailed: 'invalid_batch_settlement_evm_channel_state_read_failed',
  rpcReadFailed: 'invalid_batch_settlement_evm_rpc_read_failed',
  insufficientBalance: 'invalid_batch_settlement_evm_insufficient_balance',
  cumulativeExceedsBalance: 'invalid_batch_settlement_evm_cumulative_exceeds_balance',
  cumulativeBelowClaimed: 'invalid_batch_settlement_evm_cumulative_below_claimed',
  cumulativeAmountMismatch: 'invalid_batch_settlement_evm_cumulative_amount_mismatch',
  chargeExceedsSignedCumulative: 'invalid_batch_settlement_evm_charge_exceeds_signed_cumulative',
  missingChannel: 'invalid_batch_settlement_evm_missing_channel',
  erc3009AuthorizationRequired: 'invalid_batch_settlement_evm_erc3009_authorization_required',
  permit2AuthorizationRequired: 'invalid_batch_settlement_evm_permit2_authorization_required',
  receiveAuthorizationSignature: 'invalid_batch_settlement_evm_receive_authorization_signature',
  validAfter: 'invalid_batch_settlement_evm_payload_authorization_valid_after',
  validBefore: 'invalid_batch_settlement_evm_payload_authorization_valid_before',
  depositSimulationFailed: 'invalid_batch_settlement_evm_deposit_simulation_failed',
  depositTransactionFailed: 'invalid_batch_settlement_evm_deposit_transaction_failed',
  claimSimulationFailed: 'invalid_batch_settlement_evm_claim_simulation_failed',
  claimTransactionFailed: 'invalid_batch_settlement_evm_claim_transaction_failed',
  settleSimulationFailed: 'invalid_batch_settlement_evm_settle_simulation_failed',
  settleTransactionFailed: 'invalid_batch_settlement_evm_settle_transaction_failed',
  nothingToSettle: 'invalid_batch_settlement_evm_nothing_to_settle',
  refundAmountInvalid: 'invalid_batch_settlement_evm_refund_amount_invalid',
  refundNoBalance: 'invalid_batch_settlement_evm_refund_no_balance',
  refundSimulationFailed: 'invalid_batch_settlement_evm_refund_simulation_failed',
  refundTransactionFailed: 'invalid_batch_settlement_evm_refund_transaction_failed',
  transactionReverted: 'invalid_batch_settlement_evm_transaction_reverted',
  waitForReceiptFailed: 'invalid_batch_settlement_evm_wait_for_receipt_failed',
  unknownSettleAction: 'invalid_batch_settlement_evm_unknown_settle_action',
} as const;

/** One of the {@link BATCH_SETTLEMENT_REASONS} strings. */
export type BatchSettlementReason = (typeof BATCH_SETTLEMENT_REASONS)[keyof typeof BATCH_SETTLEMENT_REASONS];

/**
 * A malformed batch-settlement object: an X402Error (`malformed_payment`) carrying the spec's reason.
 *
 * @example
 * try { parseBatchSettlePayload(body.paymentPayload.payload) }
 * catch (e) { if (e instanceof BatchSettlementPayloadError) return { success: false, errorReason: e.reason } }
 */
export class BatchSettlementPayloadError extends X402Error {
  readonly reason: BatchSettlementReason;

  constructor(reason: BatchSettlementReason, message: string) {
    super('malformed_payment', message);
    this.reason = reason;
  }
}

// ---- types ---------------------------------------------------------------------------------

/** A voucher as a payload carries it: the channel, the cumulative ceiling and the payer's EIP-712 signature. */
export interface VoucherFields {
  channelId: Hex;
  /** Cumulative ceiling the receiver may claim, uint128 decimal string. */
  maxClaimableAmount: string;
  signature: Hex;
}

/** ERC-3009 ReceiveWithAuthorization to the deposit collector; its nonce is `erc3009DepositNonce(channelId, salt)`. */
export interface Erc3009DepositAuthorization {
  validAfter: string;
  validBefore: string;
  /** uint256, as 0x hex (the reference client) or a decimal string. */
  salt: string;
  signature: Hex;
}

/** Permit2 PermitWitnessTransferFrom to the Permit2 deposit collector (witness: the channel id). */
export interface Permit2DepositAuthorization {
  from: Address;
  permitted: { token: Address; amount: string };
  spender: Address;
  nonce: string;
  deadline: string;
  witness: { channelId: Hex };
  signature: Hex;
}

/** Exactly one transfer method. */
export type DepositAuthorization =
  | { erc3009Authorization: Erc3009DepositAuthorization; permit2Authorization?: undefined }
  | { erc3009Authorization?: undefined; permit2Authorization: Permit2DepositAuthorization };

/** Client payload: fund the channel (created on the first deposit) and pay with a voucher. */
export interface DepositPayload {
  type: 'deposit';
  channelConfig: ChannelConfig;
  voucher: VoucherFields;
  deposit: { amount: string; authorization: DepositAuthorization };
}

/** Client payload: pay with a new cumulative voucher on a funded channel. */
export interface VoucherPayload {
  type: 'voucher';
  channelConfig: ChannelConfig;
  voucher: VoucherFields;
}

/** Client payload: ask for a cooperative refund (zero-charge voucher; no `amount` = all that is left). */
export interface RefundPayload {
  type: 'refund';
  channelConfig: ChannelConfig;
  voucher: VoucherFields;
  amount?: string;
}

/** What a client pays with (the `payload` of its PaymentPayload); also what `/verify` receives. */
export type BatchClientPayload = DepositPayload | VoucherPayload | RefundPayload;

/** One row of `claimWithSignature`: a voucher with its channel config and the total to claim (≤ the voucher). */
export interface VoucherClaim {
  voucher: { channel: ChannelConfig; maxClaimableAmount: string };
  signature: Hex;
  totalClaimed: string;
}

/** Server → facilitator `/settle`: claim vouchers of many channels in one transaction (no transfer). */
export interface ClaimPayload {
  type: 'claim';
  claims: VoucherClaim[];
  /** EIP-712 ClaimBatch signature by the channels' receiverAuthorizer; omitted when it is the facilitator's. */
  claimAuthorizerSignature?: Hex;
}

/** Server → facilitator `/settle`: sweep the receiver's claimed-but-unsettled funds of `token`. */
export interface SettlePayload {
  type: 'settle';
  receiver: Address;
  token: Address;
}

/** Server → facilitator `/settle`: the client's refund completed with the nonce, claims and (its own) signatures. */
export interface RefundSettlePayload {
  type: 'refund';
  channelConfig: ChannelConfig;
  voucher: VoucherFields;
  amount: string;
  refundNonce: string;
  claims: VoucherClaim[];
  refundAuthorizerSignature?: Hex;
  claimAuthorizerSignature?: Hex;
}

/** Every payload a facilitator's `/settle` takes for this scheme. */
export type BatchSettlePayload = DepositPayload | ClaimPayload | SettlePayload | RefundSettlePayload;

/** A channel's on-chain snapshot (the `/verify` `extra`, the `/settle` `extra.channelState`). */
export interface ChannelSnapshot {
  channelId: Hex;
  balance: string;
  totalClaimed: string;
  /** Unix seconds a timed withdrawal started, 0 when none. */
  withdrawRequestedAt: number;
  refundNonce: string;
}

/** The snapshot a resource server adds its running charge to (PAYMENT-RESPONSE, corrective 402). */
export interface ChannelStateExtra extends ChannelSnapshot {
  chargedCumulativeAmount?: string;
}

/** The last voucher a server holds, proving its `chargedCumulativeAmount` (corrective 402). */
export interface VoucherStateExtra {
  signedMaxClaimable?: string;
  signature?: Hex;
}

/** `extra` of a PAYMENT-RESPONSE (and of a facilitator's `/settle` answer). */
export interface PaymentResponseExtra {
  chargedAmount?: string;
  channelState?: ChannelStateExtra;
  voucherState?: VoucherStateExtra;
}

/** `extra` of batch-settlement requirements (a corrective 402 adds `channelState` and `voucherState`). */
export interface BatchRequirementsExtra {
  receiverAuthorizer: Address;
  withdrawDelay: number;
  name: string;
  version: string;
  assetTransferMethod?: 'eip3009' | 'permit2';
  minDeposit?: string;
  channelState?: ChannelStateExtra;
  voucherState?: VoucherStateExtra;
}

/** PaymentRequirements of the scheme (operations `claim`/`settle` carry `amount` "0", timeout 0, empty extra). */
export interface BatchRequirements {
  scheme: typeof BATCH_SETTLEMENT_SCHEME;
  network: `eip155:${string}`;
  amount: string;
  asset: Address;
  payTo: Address;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

// ---- schemas -------------------------------------------------------------------------------

const AddressS = Type.String({ pattern: ADDRESS_PATTERN.source });
const Bytes32S = Type.String({ pattern: BYTES32_PATTERN.source });
const SigS = Type.String({ pattern: HEX_BYTES_PATTERN.source, maxLength: 8192 });
const UintS = Type.String({ pattern: UINT_PATTERN.source });
const UintOrHexS = Type.Union([UintS, Type.String({ pattern: '^0x[0-9a-fA-F]{1,64}$' })]);
const Seconds = Type.Integer({ minimum: 0, maximum: 2 ** 40 - 1 });
const Obj = Type.Record(Type.String(), Type.Unknown());

const ChannelConfigSchema = Type.Object({
  payer: AddressS,
  payerAuthorizer: AddressS,
  receiver: AddressS,
  receiverAuthorizer: AddressS,
  token: AddressS,
  withdrawDelay: Seconds,
  salt: Bytes32S,
});
const VoucherFieldsSchema = Type.Object({ channelId: Bytes32S, maxClaimableAmount: UintS, signature: SigS });
const Erc3009Schema = Type.Object({ validAfter: UintS, validBefore: UintS, salt: UintOrHexS, signature: SigS });
const Permit2Schema = Type.Object({
  from: AddressS,
  permitted: Type.Object({ token: AddressS, amount: UintS }),
  spender: AddressS,
  nonce: UintS,
  deadline: UintS,
  witness: Type.Object({ channelId: Bytes32S }),
  signature: SigS,
});
const DepositSchema = Type.Object({
  type: Type.Literal('deposit'),
  channelConfig: ChannelConfigSchema,
  voucher: VoucherFieldsSchema,
  deposit: Type.Object({
    amount: UintS,
    authorization: Type.Object({ erc3009Authorization: Type.Optional(Erc3009Schema), permit2Authorization: Type.Optional(Permit2Schema) }),
  }),
});
const VoucherSchema = Type.Object({ type: Type.Literal('voucher'), channelConfig: ChannelConfigSchema, voucher: VoucherFieldsSchema });
const RefundSchema = Type.Object({
  type: Type.Literal('refund'),
  channelConfig: ChannelConfigSchema,
  voucher: VoucherFieldsSchema,
  amount: Type.Optional(UintS),
});
const ClaimRowSchema = Type.Object({
  voucher: Type.Object({ channel: ChannelConfigSchema, maxClaimableAmount: UintS }),
  signature: SigS,
  totalClaimed: UintS,
});
const Claims = Type.Array(ClaimRowSchema, { maxItems: 1000 });
const ClaimSchema = Type.Object({ type: Type.Literal('claim'), claims: Claims, claimAuthorizerSignature: Type.Optional(SigS) });
const SettleSchema = Type.Object({ type: Type.Literal('settle'), receiver: AddressS, token: AddressS });
const RefundSettleSchema = Type.Object({
  type: Type.Literal('refund'),
  channelConfig: ChannelConfigSchema,
  voucher: VoucherFieldsSchema,
  amount: UintS,
  refundNonce: UintS,
  claims: Claims,
  refundAuthorizerSignature: Type.Optional(SigS),
  claimAuthorizerSignature: Type.Optional(SigS),
});
const ChannelStateSchema = Type.Object({
  channelId: Bytes32S,
  balance: UintS,
  totalClaimed: UintS,
  withdrawRequestedAt: Seconds,
  refundNonce: UintS,
  chargedCumulativeAmount: Type.Optional(UintS),
});
const VoucherStateSchema = Type.Object({ signedMaxClaimable: Type.Optional(UintS), signature: Type.Optional(SigS) });
const ResponseExtraSchema = Type.Object({
  chargedAmount: Type.Optional(UintS),
  channelState: Type.Optional(ChannelStateSchema),
  voucherState: Type.Optional(VoucherStateSchema),
});
const RequirementsExtraSchema = Type.Object({
  receiverAuthorizer: AddressS,
  withdrawDelay: Seconds,
  name: Type.String({ minLength: 1, maxLength: 256 }),
  version: Type.String({ minLength: 1, maxLength: 64 }),
  assetTransferMethod: Type.Optional(Type.Union([Type.Literal('eip3009'), Type.Literal('permit2')])),
  minDeposit: Type.Optional(UintS),
  channelState: Type.Optional(ChannelStateSchema),
  voucherState: Type.Optional(VoucherStateSchema),
});
const RequirementsSchema = Type.Object({
  scheme: Type.Literal(BATCH_SETTLEMENT_SCHEME),
  network: Type.String({ pattern: '^eip155:[1-9][0-9]{0,15}$' }),
  amount: UintS,
  asset: AddressS,
  payTo: AddressS,
  maxTimeoutSeconds: Type.Integer({ minimum: 0, maximum: 31_536_000 }),
  extra: Type.Optional(Type.Union([Obj, Type.Null()])),
});

/**
 * TypeBox schemas of the scheme's wire objects (prefer the parse* functions, which also bound integers).
 *
 * @example const valid = Value.Check(BatchSettlementSchemas.channelConfig, config);
 */
export const BatchSettlementSchemas = {
  channelConfig: ChannelConfigSchema,
  deposit: DepositSchema,
  voucher: VoucherSchema,
  refund: RefundSchema,
  claim: ClaimSchema,
  settle: SettleSchema,
  refundSettle: RefundSettleSchema,
  channelState: ChannelStateSchema,
  voucherState: VoucherStateSchema,
  responseExtra: ResponseExtraSchema,
  requirementsExtra: RequirementsExtraSchema,
  requirements: RequirementsSchema,
};

const check = {
  deposit: TypeCompiler.Compile(DepositSchema),
  voucher: TypeCompiler.Compile(VoucherSchema),
  refund: TypeCompiler.Compile(RefundSchema),
  claim: TypeCompiler.Compile(ClaimSchema),
  settle: TypeCompiler.Compile(SettleSchema),
  refundSettle: TypeCompiler.Compile(RefundSettleSchema),
  channelState: TypeCompiler.Compile(ChannelStateSchema),
  voucherState: TypeCompiler.Compile(VoucherStateSchema),
  responseExtra: TypeCompiler.Compile(ResponseExtraSchema),
  requirementsExtra: TypeCompiler.Compile(RequirementsExtraSchema),
  requirements: TypeCompiler.Compile(RequirementsSchema),
};

// ---- parsers -------------------------------------------------------------------------------

function shaped<T>(checker: TypeCheck<TSchema>, value: unknown, reason: BatchSettlementReason, what: string): T {
  if (checker.Check(value)) return value as T;
  const first = checker.Errors(value).First();
  throw new BatchSettlementPayloadError(reason, `Malformed ${what}: ${first?.path || '/'} ${first?.message ?? 'is invalid'}`);
}

function bounded(value: string, max: bigint, reason: BatchSettlementReason, what: string): void {
  if (BigInt(value) > max)
    throw new BatchSettlementPayloadError(reason, `Malformed ${what}: exceeds uint${max === MAX_UINT128 ? 128 : 256}`);
}

const MAX_UINT256 = 2n ** 256n - 1n;

function checkConfig(config: ChannelConfig, reason: BatchSettlementReason, what: string): void {
  if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
    throw new BatchSettlementPayloadError(
      BATCH_SETTLEMENT_REASONS.withdrawDelayOutOfRange,
      `Malformed ${what}: withdrawDelay ${config.withdrawDelay} is outside ${MIN_WITHDRAW_DELAY}–${MAX_WITHDRAW_DELAY} seconds`,
    );
  }
  if (/^0x0{40}$/.test(config.receiverAuthorizer)) {
    throw new BatchSettlementPayloadError(reason, `Malformed ${what}: receiverAuthorizer is the zero address`);
  }
}

function checkVoucher(voucher: VoucherFields, reason: BatchSettlementReason, what: string): void {
  bounded(voucher.maxClaimableAmount, MAX_UINT128, reason, `${what} voucher.maxClaimableAmount`);
}

function checkClaims(claims: VoucherClaim[], reason: BatchSettlementReason, what: string): void {
  for (const [index, claim] of claims.entries()) {
    const row = `${what} claims/${index}`;
    checkConfig(claim.voucher.channel, reason, row);
    bounded(claim.voucher.maxClaimableAmount, MAX_UINT128, reason, `${row} maxClaimableAmount`);
    bounded(claim.totalClaimed, MAX_UINT128, reason, `${row} totalClaimed`);
    if (BigInt(claim.totalClaimed) > BigInt(claim.voucher.maxClaimableAmount)) {
      throw new BatchSettlementPayloadError(reason, `Malformed ${row}: totalClaimed exceeds the voucher's maxClaimableAmount`);
    }
  }
}

function parseDeposit(value: unknown): DepositPayload {
  const reason = BATCH_SETTLEMENT_REASONS.depositPayload;
  const payload = shaped<DepositPayload>(check.deposit, value, reason, 'deposit payload');
  checkConfig(payload.channelConfig, reason, 'deposit payload');
  checkVoucher(payload.voucher, reason, 'deposit payload');
  const { amount, authorization } = payload.deposit;
  bounded(amount, MAX_UINT128, reason, 'deposit payload deposit.amount');
  if (BigInt(amount) === 0n) throw new BatchSettlementPayloadError(reason, 'Malformed deposit payload: deposit.amount is zero');
  const methods = [authorization.erc3009Authorization, authorization.permit2Authorization].filter(Boolean).length;
  if (methods !== 1) {
    throw new BatchSettlementPayloadError(
      reason,
      'Malformed deposit payload: deposit.authorization needs exactly one of erc3009Authorization, permit2Authorization',
    );
  }
  const erc3009 = authorization.erc3009Authorization;
  if (erc3009) {
    for (const field of ['validAfter', 'validBefore', 'salt'] as const)
      bounded(erc3009[field], MAX_UINT256, reason, `deposit payload ${field}`);
  }
  const permit2 = authorization.permit2Authorization;
  if (permit2) {
    bounded(permit2.permitted.amount, MAX_UINT256, reason, 'deposit payload permitted.amount');
    bounded(permit2.nonce, MAX_UINT256, reason, 'deposit payload nonce');
    bounded(permit2.deadline, MAX_UINT256, reason, 'deposit payload deadline');
  }
  return payload;
}

function parseVoucher(value: unknown): VoucherPayload {
  const reason = BATCH_SETTLEMENT_REASONS.voucherPayload;
  const payload = shaped<VoucherPayload>(check.voucher, value, reason, 'voucher payload');
  checkConfig(payload.channelConfig, reason, 'voucher payload');
  checkVoucher(payload.voucher, reason, 'voucher payload');
  return payload;
}

function checkRefundAmount(amount: string | undefined): void {
  if (amount === undefined) return;
  if (BigInt(amount) === 0n || BigInt(amount) > MAX_UINT128) {
    throw new BatchSettlementPayloadError(
      BATCH_SETTLEMENT_REASONS.refundAmountInvalid,
      `Refund amount ${amount} is not a positive uint128`,
    );
  }
}

function parseRefund(value: unknown): RefundPayload {
  const reason = BATCH_SETTLEMENT_REASONS.refundPayload;
  const payload = shaped<RefundPayload>(check.refund, value, reason, 'refund payload');
  checkConfig(payload.channelConfig, reason, 'refund payload');
  checkVoucher(payload.voucher, reason, 'refund payload');
  checkRefundAmount(payload.amount);
  return payload;
}

function payloadType(value: unknown): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { type?: unknown }).type : undefined;
}

function unknownType(value: unknown, allowed: string): never {
  const type = payloadType(value);
  throw new BatchSettlementPayloadError(
    BATCH_SETTLEMENT_REASONS.payloadType,
    `Payload type ${typeof type === 'string' ? JSON.stringify(type.slice(0, 32)) : 'is missing'}; expected one of ${allowed}`,
  );
}

/**
 * Parses what a client pays with (the `payload` of a batch-settlement PaymentPayload; also the
 * payload of a `/verify` request): `deposit`, `voucher` or `refund`.
 *
 * @throws BatchSettlementPayloadError with the reason `…_payload_type`, `…_deposit_payload`, `…_voucher_payload`, `…_refund_payload`, `…_refund_amount_invalid` or `…_withdraw_delay_out_of_range`
 *
 * @example
 * const payload = parseBatchClientPayload(paymentPayload.payload);
 * if (payload.type === 'deposit') console.log(payload.deposit.amount);
 */
export function parseBatchClientPayload(value: unknown): BatchClientPayload {
  switch (payloadType(value)) {
    case 'deposit':
      return parseDeposit(value);
    case 'voucher':
      return parseVoucher(value);
    case 'refund':
      return parseRefund(value);
    default:
      return unknownType(value, 'deposit, voucher, refund');
  }
}

/**
 * Parses the payload of a `/settle` request: `deposit` (as the client sent it), `claim`, `settle`,
 * or `refund` completed by the server (`amount`, `refundNonce`, `claims` are then required).
 *
 * @throws BatchSettlementPayloadError (`…_payload_type`, `…_deposit_payload`, `…_claim_payload`, `…_settle_payload`, `…_refund_payload`, `…_refund_amount_invalid`, `…_withdraw_delay_out_of_range`)
 *
 * @example
 * const payload = parseBatchSettlePayload(request.paymentPayload.payload);
 * if (payload.type === 'claim') console.log(payload.claims.length, 'channels');
 */
export function parseBatchSettlePayload(value: unknown): BatchSettlePayload {
  switch (payloadType(value)) {
    case 'deposit':
      return parseDeposit(value);
    case 'claim': {
      const reason = BATCH_SETTLEMENT_REASONS.claimPayload;
      const payload = shaped<ClaimPayload>(check.claim, value, reason, 'claim payload');
      if (payload.claims.length === 0) throw new BatchSettlementPayloadError(reason, 'Malformed claim payload: claims is empty');
      checkClaims(payload.claims, reason, 'claim payload');
      return payload;
    }
    case 'settle':
      return shaped<SettlePayload>(check.settle, value, BATCH_SETTLEMENT_REASONS.settlePayload, 'settle payload');
    case 'refund': {
      const reason = BATCH_SETTLEMENT_REASONS.refundPayload;
      const payload = shaped<RefundSettlePayload>(check.refundSettle, value, reason, 'refund payload');
      checkConfig(payload.channelConfig, reason, 'refund payload');
      checkVoucher(payload.voucher, reason, 'refund payload');
      checkRefundAmount(payload.amount);
      bounded(payload.refundNonce, MAX_UINT256, reason, 'refund payload refundNonce');
      checkClaims(payload.claims, reason, 'refund payload');
      return payload;
    }
    default:
      return unknownType(value, 'deposit, claim, settle, refund');
  }
}

/**
 * Parses batch-settlement requirements as a resource server sends them to a facilitator (also the
 * minimal ones of `claim`/`settle` operations: amount "0", maxTimeoutSeconds 0, extra {}).
 *
 * @throws BatchSettlementPayloadError (`…_scheme` when the scheme differs, `…_payload_type` for other faults)
 *
 * @example
 * const requirements = parseBatchRequirements(request.paymentRequirements);
 */
export function parseBatchRequirements(value: unknown): BatchRequirements {
  const scheme = typeof value === 'object' && value !== null ? (value as { scheme?: unknown }).scheme : undefined;
  if (scheme !== BATCH_SETTLEMENT_SCHEME) {
    throw new BatchSettlementPayloadError(BATCH_SETTLEMENT_REASONS.scheme, `Scheme is not ${BATCH_SETTLEMENT_SCHEME}`);
  }
  const requirements = shaped<BatchRequirements>(check.requirements, value, BATCH_SETTLEMENT_REASONS.payloadType, 'payment requirements');
  bounded(requirements.amount, MAX_UINT128, BATCH_SETTLEMENT_REASONS.payloadType, 'payment requirements amount');
  if (requirements.extra === null) {
    const { extra: _, ...rest } = requirements;
    return rest;
  }
  return requirements;
}

/**
 * Parses the scheme's `extra` of payable requirements (what a client needs to open a channel).
 *
 * @throws BatchSettlementPayloadError (`…_missing_eip712_domain` without name/version, `…_receiver_authorizer_mismatch` without a usable receiverAuthorizer, `…_withdraw_delay_out_of_range`)
 *
 * @example
 * const { receiverAuthorizer, withdrawDelay } = parseBatchRequirementsExtra(requirements.extra);
 */
export function parseBatchRequirementsExtra(value: unknown): BatchRequirementsExtra {
  const extra = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (typeof extra.name !== 'string' || typeof extra.version !== 'string') {
    throw new BatchSettlementPayloadError(
      BATCH_SETTLEMENT_REASONS.missingEip712Domain,
      'Requirements name no EIP-712 domain (extra.name, extra.version)',
    );
  }
  if (typeof extra.receiverAuthorizer !== 'string' || /^0x0{40}$/.test(extra.receiverAuthorizer)) {
    throw new BatchSettlementPayloadError(BATCH_SETTLEMENT_REASONS.receiverAuthorizerMismatch, 'Requirements name no receiverAuthorizer');
  }
  const parsed = shaped<BatchRequirementsExtra>(check.requirementsExtra, value, BATCH_SETTLEMENT_REASONS.payloadType, 'requirements extra');
  if (parsed.withdrawDelay < MIN_WITHDRAW_DELAY || parsed.withdrawDelay > MAX_WITHDRAW_DELAY) {
    throw new BatchSettlementPayloadError(
      BATCH_SETTLEMENT_REASONS.withdrawDelayOutOfRange,
      `extra.withdrawDelay ${parsed.withdrawDelay} is out of range`,
    );
  }
  return parsed;
}

/**
 * Parses a channel snapshot (`/verify` `extra`, `/settle` `extra.channelState`, PAYMENT-RESPONSE
 * `extra.channelState`, corrective 402 `extra.channelState`).
 *
 * @throws BatchSettlementPayloadError (`…_channel_state_read_failed`)
 *
 * @example
 * const state = parseChannelState(verified.extra); // { channelId, balance, totalClaimed, withdrawRequestedAt, refundNonce }
 */
export function parseChannelState(value: unknown): ChannelStateExtra {
  return shaped<ChannelStateExtra>(check.channelState, value, BATCH_SETTLEMENT_REASONS.channelStateReadFailed, 'channel state');
}

/**
 * Parses a corrective 402's `extra.voucherState` (the server's last signed voucher).
 *
 * @throws BatchSettlementPayloadError (`…_voucher_payload`)
 *
 * @example
 * const { signedMaxClaimable, signature } = parseVoucherState(accepts[0].extra.voucherState);
 */
export function parseVoucherState(value: unknown): VoucherStateExtra {
  return shaped<VoucherStateExtra>(check.voucherState, value, BATCH_SETTLEMENT_REASONS.voucherPayload, 'voucher state');
}

/**
 * Parses the `extra` of a batch-settlement PAYMENT-RESPONSE (or of a facilitator's `/settle` answer).
 *
 * @throws BatchSettlementPayloadError (`…_channel_state_read_failed`)
 *
 * @example
 * const { chargedAmount, channelState } = parsePaymentResponseExtra(receipt.extra);
 */
export function parsePaymentResponseExtra(value: unknown): PaymentResponseExtra {
  return shaped<PaymentResponseExtra>(
    check.responseExtra,
    value ?? {},
    BATCH_SETTLEMENT_REASONS.channelStateReadFailed,
    'payment response extra',
  );
}
