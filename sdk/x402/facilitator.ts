/**
 * The standard facilitator API as both sides speak it: the verify/settle request
 * `{x402Version, paymentPayload, paymentRequirements}`, the answers of `/verify`, `/settle` and
 * `/supported`, our facilitator's `/settlements/…` and `/receipts/:tx`, and the one mapping of
 * requirements between wire versions (v1: `maxAmountRequired` and network names; v2:
 * `amount` and CAIP-2). The facilitator's routes validate and document with these schemas; a
 * resource server builds its requests and checks the answers with them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type DecodedPayment, parsePaymentPayload, parsePaymentRequirements } from './codec';
import { BYTES32_PATTERN } from './patterns';
import { X402Error } from './errors';
import { normalizeNetwork, toV1Name } from './networks';
import { ADDRESS_PATTERN, type Address, TX_HASH_PATTERN } from './patterns';
import { checkShape, type PaymentRequirements } from './schemas';

const Text = (maxLength: number) => Type.String({ maxLength });
const AddressS = Type.String({ pattern: ADDRESS_PATTERN.source });
const TxHashOrEmpty = Type.Union([Type.String({ pattern: TX_HASH_PATTERN.source }), Type.Literal('')]);
const MALFORMED = 'Malformed request: expected {x402Version: 1 | 2, paymentPayload: {…}, paymentRequirements: {…}}';
const JsonObject = (description: string) => Type.Object({}, { additionalProperties: true, description, error: MALFORMED });

/**
 * A verify or settle request. Only the envelope is checked here; the payload and requirements are
 * parsed in full by {@link parseFacilitatorRequest}, which names what is wrong.
 */
export const FacilitatorRequestSchema = Type.Object(
  {
    x402Version: Type.Optional(
      Type.Union([Type.Literal(1), Type.Literal(2)], { description: 'equal to paymentPayload.x402Version', error: MALFORMED }),
    ),
    paymentPayload: JsonObject('the PaymentPayload the client sent (v2, or v1 with `scheme` and `network`)'),
    paymentRequirements: JsonObject('the requirements the resource server offered (v2 `amount`, or v1 `maxAmountRequired`)'),
  },
  { error: MALFORMED },
);
/** The body of `POST /verify` and `POST /settle` (see {@link FacilitatorRequestSchema}). */
export type FacilitatorRequest = Static<typeof FacilitatorRequestSchema>;

/** Answer of `POST /verify`: 200 for valid and invalid payments alike. */
export const VerifyResponseSchema = Type.Object({
  isValid: Type.Boolean(),
  invalidReason: Type.Optional(Text(512)),
  invalidMessage: Type.Optional(Text(4096)),
  payer: Type.Optional(AddressS),
  /** Scheme-specific facts, e.g. a `batch-settlement` channel's snapshot. */
  extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
/** Answer of `POST /verify` (see {@link VerifyResponseSchema}). */
export interface VerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: Address;
  /** Scheme-specific facts, e.g. a `batch-settlement` channel's snapshot. */
  extra?: Record<string, unknown>;
}

/** One (version, scheme, network) a facilitator handles. */
export const SupportedKindSchema = Type.Object({
  x402Version: Type.Integer({ minimum: 1 }),
  scheme: Text(64),
  network: Text(64),
  extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
/** One (version, scheme, network) a facilitator handles. */
export type SupportedKind = Static<typeof SupportedKindSchema>;

/** Answer of `GET /supported` (v1-era facilitators send `kinds` only). */
export const SupportedResponseSchema = Type.Object({
  kinds: Type.Array(SupportedKindSchema, { maxItems: 256 }),
  extensions: Type.Optional(Type.Array(Text(200), { maxItems: 256 })),
  signers: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});
/** Answer of `GET /supported`. */
export type SupportedResponse = Static<typeof SupportedResponseSchema>;

/**
 * How a settle answers. `confirmed`: once the transfer is mined (standard x402: success means on
 * chain). `broadcast`: once the transfer is verified, simulated, signed, stored and accepted by
 * the node; its receipt is reconciled afterwards and a revert is recorded against the payer. A
 * resource server asks for one per request with the {@link SETTLEMENT_MODE_HEADER} header; without
 * it the facilitator's configured mode applies.
 *
 * @example
 * const mode = process.env.FACILITATOR_SETTLEMENT ?? 'confirmed';
 * if (!(SETTLEMENT_MODES as readonly string[]).includes(mode)) {
 *   throw new Error(`FACILITATOR_SETTLEMENT must be one of ${SETTLEMENT_MODES.join(', ')}`); // confirmed, broadcast
 * }
 */
export const SETTLEMENT_MODES = ['confirmed', 'broadcast'] as const;
/** One of {@link SETTLEMENT_MODES}. */
export type SettlementMode = (typeof SETTLEMENT_MODES)[number];
/**
 * Request header of `POST /settle` naming the {@link SettlementMode} wanted.
 *
 * @example
 * await fetch(`${facilitatorUrl}/settle`, { method: 'POST', headers: { 'content-type': 'application/json', [SETTLEMENT_MODE_HEADER]: 'broadcast' }, body });
 */
export const SETTLEMENT_MODE_HEADER = 'x-settlement-mode';

/**
 * The states of {@link SettlementStatus}.
 *
 * @example
 * const tally = Object.fromEntries(SETTLEMENT_STATES.map((state) => [state, 0])); // { unsettled: 0, pending: 0, settled: 0, failed: 0 }
 * for (const status of statuses) tally[status.status] += 1;
 */
export const SETTLEMENT_STATES = ['unsettled', 'pending', 'settled', 'failed'] as const;

/**
 * What became of one authorization, answered by `GET /settlements/:network/:asset/:payer/:nonce`:
 * `unsettled` (verified, no settlement asked for yet: a settle may still be sent), `pending` (a
 * settlement is under way or its transaction awaits a final status), `settled` (the transfer is on
 * chain) or `failed` (it did not and will not happen through this facilitator; `reason` says why).
 * A resource server that lost the answer of `/settle` asks this to learn the outcome.
 */
export const SettlementStatusSchema = Type.Object({
  status: Type.Union([Type.Literal('unsettled'), Type.Literal('pending'), Type.Literal('settled'), Type.Literal('failed')]),
  network: Text(64),
  payer: AddressS,
  transaction: TxHashOrEmpty,
  reason: Type.Optional(Text(200)),
});
/** What became of one authorization (see {@link SettlementStatusSchema}). */
export type SettlementStatus = Static<typeof SettlementStatusSchema>;

/**
 * Most authorizations one `POST /settlements` asks about.
 *
 * @example
 * for (let i = 0; i < keys.length; i += MAX_SETTLEMENT_QUERY) await ask(keys.slice(i, i + MAX_SETTLEMENT_QUERY));
 */
export const MAX_SETTLEMENT_QUERY = 100;

/**
 * `POST /settlements`: what became of several authorizations at once (one request where a resource
 * server would send one `GET /settlements/…` per payment).
 *
 * @example
 * const body = { authorizations: [{ network: 'eip155:8453', asset, payer, nonce }] };
 * const { settlements } = await (await fetch(`${facilitatorUrl}/settlements`, { method: 'POST', body: JSON.stringify(body) })).json();
 */
export const SettlementQuerySchema = Type.Object({
  authorizations: Type.Array(
    Type.Object({
      network: Text(64),
      asset: AddressS,
      payer: AddressS,
      nonce: Type.String({ pattern: BYTES32_PATTERN.source }),
    }),
    { minItems: 1, maxItems: MAX_SETTLEMENT_QUERY },
  ),
});
/** The body of `POST /settlements` (see {@link SettlementQuerySchema}). */
export type SettlementQuery = Static<typeof SettlementQuerySchema>;

/**
 * The answer of `POST /settlements`: one entry per authorization asked, in order; `null` for one
 * this facilitator never accepted.
 *
 * @example
 * const { settlements } = parseSettlementsAnswer(await res.json());
 * settlements.forEach((s, i) => console.log(i, s?.status ?? 'unknown'));
 */
export const SettlementsAnswerSchema = Type.Object({
  settlements: Type.Array(Type.Union([SettlementStatusSchema, Type.Null()]), { maxItems: MAX_SETTLEMENT_QUERY }),
});
/** The answer of `POST /settlements` (see {@link SettlementsAnswerSchema}). */
export type SettlementsAnswer = Static<typeof SettlementsAnswerSchema>;

/**
 * The states of a settlement transaction a facilitator stored.
 *
 * @example
 * const final = RECEIPT_STATUSES.filter((s) => s !== 'pending'); // ['confirmed', 'reverted', 'dropped']
 */
export const RECEIPT_STATUSES = ['pending', 'confirmed', 'reverted', 'dropped'] as const;
/** One of {@link RECEIPT_STATUSES}. */
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

/** A settlement transaction as a facilitator stored it (`GET /receipts/:tx`). Amounts in atomic units. */
export const PaymentReceiptSchema = Type.Object({
  transaction: Type.String({ pattern: TX_HASH_PATTERN.source }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('reverted'), Type.Literal('dropped')]),
  network: Text(64),
  asset: AddressS,
  payer: AddressS,
  payee: AddressS,
  amount: Type.String({ pattern: '^[0-9]{1,78}$' }),
  relayer: AddressS,
  blockNumber: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  error: Type.Union([Text(1000), Type.Null()]),
  submittedAt: Type.String(),
  updatedAt: Type.String(),
  finalizedAt: Type.Union([Type.String(), Type.Null()]),
});
/** A settlement transaction as a facilitator stored it (see {@link PaymentReceiptSchema}). */
export type PaymentReceipt = Static<typeof PaymentReceiptSchema>;

/**
 * A batched settlement transaction (`GET /receipts/:tx` for the hash of a batch): one transaction
 * carrying several payments, each with its own outcome (`pending` until the receipt is read).
 *
 * @example
 * const receipt = await (await fetch(`${facilitatorUrl}/receipts/${tx}`)).json();
 * if ('payments' in receipt) console.log(receipt.payments.filter((p) => p.status === 'settled').length, 'settled');
 */
export const BatchReceiptSchema = Type.Object({
  transaction: Type.String({ pattern: TX_HASH_PATTERN.source }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('reverted'), Type.Literal('dropped')]),
  network: Text(64),
  relayer: AddressS,
  blockNumber: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  gasUsed: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  error: Type.Union([Text(1000), Type.Null()]),
  submittedAt: Type.String(),
  updatedAt: Type.String(),
  finalizedAt: Type.Union([Type.String(), Type.Null()]),
  payments: Type.Array(
    Type.Object({
      asset: AddressS,
      payer: AddressS,
      payee: AddressS,
      amount: Type.String({ pattern: '^[0-9]{1,78}$' }),
      nonce: Type.String({ pattern: BYTES32_PATTERN.source }),
      status: Type.Union([Type.Literal('pending'), Type.Literal('settled'), Type.Literal('failed')]),
      reason: Type.Union([Text(300), Type.Null()]),
    }),
  ),
});
/** A batched settlement transaction (see {@link BatchReceiptSchema}). */
export type BatchReceipt = Static<typeof BatchReceiptSchema>;

const check = {
  request: TypeCompiler.Compile(FacilitatorRequestSchema),
  verify: TypeCompiler.Compile(VerifyResponseSchema),
  supported: TypeCompiler.Compile(SupportedResponseSchema),
  settlement: TypeCompiler.Compile(SettlementStatusSchema),
  settlements: TypeCompiler.Compile(SettlementsAnswerSchema),
};

/** What a resource server says about the resource in v1 requirements (v2 carries it in the payload). */
export interface ResourceHint {
  url: string;
  description: string;
}

/**
 * v1 requirements (`maxAmountRequired`, a network name or CAIP-2 id) in the v2 shape, unchecked.
 *
 * @example
 * requirementsFromV1({ scheme: 'exact', network: 'base', maxAmountRequired: '1000', asset, payTo, maxTimeoutSeconds: 60 });
 * // { scheme: 'exact', network: 'eip155:8453', amount: '1000', asset, payTo, maxTimeoutSeconds: 60, extra: undefined }
 */
export function requirementsFromV1(requirements: Record<string, unknown>): Record<string, unknown> {
  const { maxAmountRequired, network, scheme, asset, payTo, maxTimeoutSeconds, extra } = requirements;
  return {
    scheme,
    network: typeof network === 'string' ? normalizeNetwork(network) : network,
    amount: maxAmountRequired,
    asset,
    payTo,
    maxTimeoutSeconds,
    extra,
  };
}

/**
 * v2 requirements for a v1 payload: `maxAmountRequired`, the network as the payload names it, the resource fields.
 *
 * @example
 * const v1 = requirementsToV1(payment, terms.requirements, { url: 'https://skills.example/echo', description: 'Echo' });
 * v1.maxAmountRequired; // terms.requirements.amount
 */
export function requirementsToV1(
  payment: DecodedPayment,
  requirements: PaymentRequirements,
  resource: ResourceHint,
): Record<string, unknown> {
  const named = (payment.original as { network?: unknown }).network;
  return {
    scheme: requirements.scheme,
    network: typeof named === 'string' ? named : (toV1Name(requirements.network) ?? requirements.network),
    maxAmountRequired: requirements.amount,
    resource: resource.url,
    description: resource.description,
    mimeType: 'application/json',
    payTo: requirements.payTo,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    asset: requirements.asset,
    extra: requirements.extra,
  };
}

/**
 * The body of `POST /verify` and `POST /settle` for a decoded payment, in the payment's own wire version.
 *
 * @example
 * const body = facilitatorRequest(payment, terms.requirements, { url: resourceUrl, description: 'Echo' });
 * const verified = parseVerifyResponse(await (await fetch(`${facilitatorUrl}/verify`, { method: 'POST', body: JSON.stringify(body) })).json());
 */
export function facilitatorRequest(payment: DecodedPayment, requirements: PaymentRequirements, resource: ResourceHint): FacilitatorRequest {
  return {
    x402Version: payment.x402Version,
    paymentPayload: payment.original as unknown as Record<string, unknown>,
    paymentRequirements: payment.x402Version === 2 ? { ...requirements } : requirementsToV1(payment, requirements, resource),
  };
}

/** A verify/settle request parsed in full; both wire versions normalized to v2 requirements. */
export interface ParsedFacilitatorRequest {
  x402Version: 1 | 2;
  payment: DecodedPayment;
  requirements: PaymentRequirements;
  /** The network as the payload names it (a v1 name or CAIP-2), echoed in settle answers. */
  network: string;
}

/**
 * Parses `{x402Version, paymentPayload, paymentRequirements}`.
 *
 * @throws X402Error: `malformed_payment` / `invalid_requirements` when the request is not a
 * facilitator request (answered 400), `unsupported_scheme` / `invalid_network` when it is one this
 * facilitator cannot take (answered 200 with the reason)
 *
 * @example
 * const { payment, requirements, network } = parseFacilitatorRequest(await request.json()); // a facilitator's /verify
 */
export function parseFacilitatorRequest(body: unknown): ParsedFacilitatorRequest {
  const envelope = checkShape<FacilitatorRequest>(check.request, body, 'malformed_payment', 'facilitator request');
  const { paymentPayload, paymentRequirements } = envelope;
  if (envelope.x402Version !== undefined && envelope.x402Version !== (paymentPayload as { x402Version?: unknown }).x402Version) {
    throw new X402Error('malformed_payment', 'Malformed request: x402Version differs from paymentPayload.x402Version');
  }
  const payment = parsePaymentPayload(paymentPayload);
  const requirements = parsePaymentRequirements(payment.x402Version === 1 ? requirementsFromV1(paymentRequirements) : paymentRequirements);
  const network = payment.x402Version === 1 ? (payment.original as { network: string }).network : payment.network;
  return { x402Version: payment.x402Version, payment, requirements, network };
}

/**
 * The network a (possibly malformed) request names, for echoing in a refusal.
 *
 * @example
 * requestedNetwork({ paymentPayload: { x402Version: 1, network: 'base' } }); // 'base'
 */
export function requestedNetwork(body: unknown): string {
  const payload = (body as { paymentPayload?: { network?: unknown; accepted?: { network?: unknown } } } | null)?.paymentPayload;
  const named = typeof payload?.network === 'string' ? payload.network : payload?.accepted?.network;
  return typeof named === 'string' ? named.slice(0, 64) : '';
}

/**
 * Checks a `/verify` answer.
 *
 * @throws X402Error('malformed_settle_response')
 * @example
 * const verified = parseVerifyResponse(await (await fetch(`${facilitatorUrl}/verify`, { method: 'POST', body })).json());
 * if (!verified.isValid) console.log(verified.invalidReason);
 */
export function parseVerifyResponse(value: unknown): VerifyResponse {
  return checkShape<VerifyResponse>(check.verify, value, 'malformed_settle_response', 'verify response');
}

/**
 * Checks a `/supported` answer.
 *
 * @throws X402Error('malformed_settle_response')
 * @example
 * const { kinds } = parseSupportedResponse(await (await fetch(`${facilitatorUrl}/supported`)).json());
 * kinds.some((k) => k.scheme === 'exact' && k.network === 'eip155:8453');
 */
export function parseSupportedResponse(value: unknown): SupportedResponse {
  return checkShape<SupportedResponse>(check.supported, value, 'malformed_settle_response', 'supported response');
}

/**
 * Checks a `/settlements/…` answer.
 *
 * @throws X402Error('malformed_settle_response')
 * @example
 * const status = parseSettlementStatus(await (await fetch(`${facilitatorUrl}/settlements/${network}/${asset}/${payer}/${nonce}`)).json());
 * if (status.status === 'settled') console.log(status.transaction);
 */
export function parseSettlementStatus(value: unknown): SettlementStatus {
  return checkShape<SettlementStatus>(check.settlement, value, 'malformed_settle_response', 'settlement status');
}

/**
 * Checks the answer of `POST /settlements`; X402Error("malformed_settle_response") otherwise.
 *
 * @example
 * const { settlements } = parseSettlementsAnswer(await (await fetch(`${facilitatorUrl}/settlements`, init)).json());
 */
export function parseSettlementsAnswer(value: unknown): SettlementsAnswer {
  return checkShape<SettlementsAnswer>(check.settlements, value, 'malformed_settle_response', 'settlement statuses');
}
