/**
 * TypeBox schemas of every x402 wire object, compiled once, with the TypeScript types they guard.
 * Unknown extra properties are tolerated (newer peers add fields) but every known field is checked
 * strictly; `null` is accepted where the reference schemas accept it and dropped on normalization.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { X402Error, type X402ErrorCode } from './errors';
import type { Caip2Network } from './networks';
import { ADDRESS_PATTERN, BYTES32_PATTERN, HEX_BYTES_PATTERN, TX_HASH_PATTERN, UINT_PATTERN, type Address, type Hex } from './patterns';

const Str = Type.String({ minLength: 1, maxLength: 2048 });
const OptStr = Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]));
const AddressS = Type.String({ pattern: ADDRESS_PATTERN.source });
const UintS = Type.String({ pattern: UINT_PATTERN.source });
const Timeout = Type.Integer({ minimum: 1, maximum: 31_536_000 });
const Obj = Type.Record(Type.String(), Type.Unknown());
const OptObj = Type.Optional(Type.Union([Obj, Type.Null()]));

const ResourceInfoSchema = Type.Object({ url: Str, description: OptStr, mimeType: OptStr });

/** Strict v2 requirements of the `exact` scheme on an EVM network. */
export const RequirementsSchema = Type.Object({
  scheme: Type.Literal('exact'),
  network: Type.String({ pattern: '^eip155:[1-9][0-9]{0,15}$' }),
  amount: UintS,
  asset: AddressS,
  payTo: AddressS,
  maxTimeoutSeconds: Timeout,
  extra: OptObj,
});

/** Requirements of any scheme/network, as found in a PaymentRequired `accepts` list. */
export const AnyRequirementsSchema = Type.Object({
  scheme: Str,
  network: Str,
  amount: Str,
  asset: Str,
  payTo: Str,
  maxTimeoutSeconds: Type.Number({ exclusiveMinimum: 0 }),
  extra: OptObj,
});

/** A v2 PaymentRequired: `x402Version` 2, the paid `resource`, the `accepts` list of requirements (the PAYMENT-REQUIRED header's content). */
export const PaymentRequiredSchema = Type.Object({
  x402Version: Type.Literal(2),
  error: OptStr,
  resource: ResourceInfoSchema,
  accepts: Type.Array(AnyRequirementsSchema, { minItems: 1, maxItems: 64 }),
  extensions: OptObj,
});

/** An EIP-3009 TransferWithAuthorization: `from`, `to`, `value`, `validAfter`, `validBefore` (decimal strings) and the bytes32 `nonce`. */
export const AuthorizationSchema = Type.Object({
  from: AddressS,
  to: AddressS,
  value: UintS,
  validAfter: UintS,
  validBefore: UintS,
  nonce: Type.String({ pattern: BYTES32_PATTERN.source }),
});

/** The `payload` of an `exact` EVM payment: the authorization and its 65-byte signature. */
export const ExactPayloadSchema = Type.Object({
  signature: Type.String({ pattern: HEX_BYTES_PATTERN.source, maxLength: 8192 }),
  authorization: AuthorizationSchema,
});

/** A v2 PaymentPayload (PAYMENT-SIGNATURE): the `accepted` requirements echoed, the signed authorization, optional resource and extensions. */
export const PaymentPayloadV2Schema = Type.Object({
  x402Version: Type.Literal(2),
  accepted: RequirementsSchema,
  payload: ExactPayloadSchema,
  resource: Type.Optional(Type.Union([ResourceInfoSchema, Type.Null()])),
  extensions: OptObj,
});

/** A v1 PaymentPayload (X-Payment): scheme `exact`, the network (a v1 name such as `base`, or CAIP-2), the signed authorization. */
export const PaymentPayloadV1Schema = Type.Object({
  x402Version: Type.Literal(1),
  scheme: Type.Literal('exact'),
  network: Str,
  payload: ExactPayloadSchema,
});

/** A settlement receipt (PAYMENT-RESPONSE / X-PAYMENT-RESPONSE, a facilitator's `/settle` answer): `success`, `transaction`, `network`, the reason when it failed. */
export const SettleResponseSchema = Type.Object({
  success: Type.Boolean(),
  errorReason: OptStr,
  errorMessage: OptStr,
  payer: Type.Optional(Type.Union([AddressS, Type.Null()])),
  transaction: Type.String({ pattern: TX_HASH_PATTERN.source }),
  network: Str,
  /** Atomic units moved (`batch-settlement`: deposited, settled, refunded; "" for a voucher or claim). */
  amount: Type.Optional(Type.String({ maxLength: 78 })),
  asset: Type.Optional(AddressS),
  /** Scheme-specific facts, e.g. `batch-settlement`'s `chargedAmount` and `channelState`. */
  extra: OptObj,
});

/** The marketplace's 402 body; `amount`/`asset`/`extra`/`x402Version` are optional extras. */
export const PaymentRequiredBodySchema = Type.Object({
  accepts: Type.Object({
    scheme: Str,
    price: Str,
    network: Str,
    payTo: AddressS,
    maxTimeoutSeconds: Timeout,
    x402Version: Type.Optional(Type.Number()),
    amount: Type.Optional(UintS),
    asset: Type.Optional(AddressS),
    extra: OptObj,
  }),
  description: Type.String({ maxLength: 4096 }),
  error: OptStr,
  extensions: OptObj,
});

export const Checkers = {
  requirements: TypeCompiler.Compile(RequirementsSchema),
  authorization: TypeCompiler.Compile(AuthorizationSchema),
  paymentRequired: TypeCompiler.Compile(PaymentRequiredSchema),
  payloadV2: TypeCompiler.Compile(PaymentPayloadV2Schema),
  payloadV1: TypeCompiler.Compile(PaymentPayloadV1Schema),
  settleResponse: TypeCompiler.Compile(SettleResponseSchema),
  body: TypeCompiler.Compile(PaymentRequiredBodySchema),
};

/**
 * Checks `value` against a compiled schema; on failure throws X402Error(code) naming the first
 * offending field. The cast to T is safe because each T mirrors its schema.
 */
export function checkShape<T>(checker: TypeCheck<TSchema>, value: unknown, code: X402ErrorCode, what: string): T {
  if (checker.Check(value)) return value as T;
  const first = checker.Errors(value).First();
  const where = first?.path ? first.path : '/';
  throw new X402Error(code, `Malformed ${what}: ${where} ${first?.message ?? 'is invalid'}`);
}

/** Resource the payment is for (v2). */
export interface ResourceInfo {
  url: string;
  description?: string;
  mimeType?: string;
  /** Bazaar service metadata (see `serviceMetadata`). */
  serviceName?: string;
  tags?: string[];
  iconUrl?: string;
}

/** v2 PaymentRequirements of the `exact` scheme on an EVM network. */
export interface PaymentRequirements {
  scheme: 'exact';
  network: Caip2Network;
  /** Atomic units, decimal string. */
  amount: string;
  asset: Address;
  payTo: Address;
  maxTimeoutSeconds: number;
  /** EIP-712 domain `{ name, version }` of the asset, plus any scheme extras. */
  extra?: Record<string, unknown>;
}

/** Requirements of any scheme, as listed by a server (not necessarily payable by us). */
export interface AnyPaymentRequirements {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

/** v2 PaymentRequired, carried base64-encoded in the PAYMENT-REQUIRED header. */
export interface PaymentRequired {
  x402Version: 2;
  error?: string;
  resource: ResourceInfo;
  accepts: AnyPaymentRequirements[];
  extensions?: Record<string, unknown>;
}

/** EIP-3009 TransferWithAuthorization message; numbers are decimal strings. */
export interface Authorization {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

/** The `payload` of an exact-EVM payment: the authorization and its signature. */
export interface ExactEvmPayload {
  signature: Hex;
  authorization: Authorization;
}

/** v2 PaymentPayload (PAYMENT-SIGNATURE / X-Payment header). */
export interface PaymentPayloadV2 {
  x402Version: 2;
  accepted: PaymentRequirements;
  payload: ExactEvmPayload;
  resource?: ResourceInfo;
  extensions?: Record<string, unknown>;
}

/** v1 PaymentPayload (X-PAYMENT header). */
export interface PaymentPayloadV1 {
  x402Version: 1;
  scheme: 'exact';
  network: string;
  payload: ExactEvmPayload;
}

/** Settlement receipt (PAYMENT-RESPONSE / X-PAYMENT-RESPONSE header, facilitator /settle answer). */
export interface SettleResponse {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: Address;
  /** Transaction hash, "" when nothing was sent. */
  transaction: string;
  network: string;
  /** Atomic units moved (`batch-settlement`: deposited, settled, refunded; "" for a voucher or claim). */
  amount?: string;
  asset?: Address;
  /** Scheme-specific facts, e.g. `batch-settlement`'s `chargedAmount` and `channelState`. */
  extra?: Record<string, unknown>;
}

/** The marketplace's HTTP 402 JSON body. */
export interface PaymentRequiredBody {
  accepts: {
    scheme: 'exact';
    /** Decimal USDC amount without dollar sign, e.g. "0.001". */
    price: string;
    network: Caip2Network;
    payTo: Address;
    maxTimeoutSeconds: number;
    x402Version: 2;
    amount: string;
    asset: Address;
    extra: Record<string, unknown>;
  };
  description: string;
  error?: string;
  /** The x402 extensions the 402 declares (as in PAYMENT-REQUIRED), e.g. `bazaar` with the input and output schemas. */
  extensions?: Record<string, unknown>;
}
