/**
 * Payment terms of one skill, built once and deterministically: the v2 PaymentRequirements and
 * PaymentRequired, the marketplace's 402 body, the full 402 response, and the matcher a skill
 * server uses to check that a proof answers these terms.
 */
import { getAddress } from 'viem';
import { encodeBase64Json } from './base64';
import { serviceMetadata, type ServiceMetadata } from './bazaar-metadata';
import type { DecodedPayment } from './codec';
import { X402Error } from './errors';
import { PAYMENT_REQUIRED_HEADER } from './headers';
import { DEFAULT_NETWORK, normalizeNetwork, resolveAsset, type AssetInfo } from './networks';
import { ADDRESS_PATTERN } from './patterns';
import { MAX_PRICE_UNITS, formatPrice } from './price';
import type { PaymentRequired, PaymentRequiredBody, PaymentRequirements } from './schemas';

/**
 * The marketplace's documented payment window.
 *
 * @example
 * buildPaymentTerms({ amount, payTo, resourceUrl }).requirements.maxTimeoutSeconds; // DEFAULT_MAX_TIMEOUT_SECONDS (60)
 */
export const DEFAULT_MAX_TIMEOUT_SECONDS = 60;

/** What a skill charges and where the money goes. */
export interface TermsInput {
  /** Price in atomic units (use `parsePrice("$0.001")`). */
  amount: bigint;
  /** Recipient address (0x + 40 hex). */
  payTo: string;
  /** CAIP-2 network or v1 name; default `eip155:8453` (Base mainnet). */
  network?: string;
  /** Token to pay in; default the network's USDC. Required on chains without a built-in USDC. */
  asset?: AssetInfo;
  /** Absolute URL of the paid resource, e.g. `https://skills.example/translate`. */
  resourceUrl: string;
  /** Skill description (402 body `description`, PaymentRequired `resource.description`). */
  description?: string;
  /** MIME type of the paid response, e.g. `application/json`. */
  mimeType?: string;
  /** Seconds an authorization stays valid; default 60. */
  maxTimeoutSeconds?: number;
  /** Service metadata for catalogues (`resource.serviceName`, `tags`, `iconUrl`), kept where the bazaar rules allow; see {@link serviceMetadata}. */
  service?: ServiceMetadata;
  /**
   * x402 extensions the 402 declares (PaymentRequired `extensions`, e.g. `bazaar`), echoed by clients
   * in their payment; the 402 body carries them too, for crawlers that read the body.
   */
  extensions?: Record<string, unknown>;
}

/** Everything a server needs to ask for and check payments for one skill. Deeply frozen. */
export interface PaymentTerms {
  requirements: PaymentRequirements & { extra: { name: string; version: string } };
  paymentRequired: PaymentRequired;
  body: PaymentRequiredBody;
  asset: AssetInfo;
}

/** The pieces of an HTTP 402 answer, for any framework. */
export interface PaymentRequiredResponse {
  status: 402;
  headers: Record<string, string>;
  body: PaymentRequiredBody;
}

function invalid(message: string): never {
  throw new X402Error('invalid_requirements', message);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Builds the payment terms of a skill. Same input, same output (addresses are checksummed), so
 * the `accepted` a client echoes matches what we offer.
 *
 * @example
 * const terms = buildPaymentTerms({ amount: parsePrice("$0.001"), payTo, resourceUrl: "https://x.test/echo" });
 * @throws X402Error("invalid_requirements" | "invalid_network" | "invalid_asset" | "invalid_price")
 */
export function buildPaymentTerms(input: TermsInput): PaymentTerms {
  const network = normalizeNetwork(input.network ?? DEFAULT_NETWORK);
  const asset = resolveAsset(network, input.asset);
  const maxAtomic = MAX_PRICE_UNITS * 10n ** BigInt(asset.decimals);
  if (typeof input.amount !== 'bigint' || input.amount <= 0n || input.amount > maxAtomic) {
    throw new X402Error('invalid_price', `Invalid amount ${String(input.amount)}: expected a bigint in 1..${maxAtomic}`);
  }
  if (typeof input.payTo !== 'string' || !ADDRESS_PATTERN.test(input.payTo)) invalid('payTo must be 0x + 40 hex');
  const maxTimeoutSeconds = input.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS;
  if (!Number.isInteger(maxTimeoutSeconds) || maxTimeoutSeconds < 1 || maxTimeoutSeconds > 31_536_000) {
    invalid('maxTimeoutSeconds must be a positive integer');
  }
  if (typeof input.resourceUrl !== 'string' || input.resourceUrl.length > 2048 || !URL.canParse(input.resourceUrl)) {
    invalid('resourceUrl must be an absolute URL');
  }
  const description = input.description ?? '';
  const requirements = {
    scheme: 'exact' as const,
    network,
    amount: input.amount.toString(),
    asset: asset.address,
    payTo: getAddress(input.payTo.toLowerCase()),
    maxTimeoutSeconds,
    extra: { name: asset.name, version: asset.version },
  };
  const resource: PaymentRequired['resource'] = { url: input.resourceUrl };
  if (input.description !== undefined) resource.description = description;
  if (input.mimeType !== undefined) resource.mimeType = input.mimeType;
  if (input.service) Object.assign(resource, serviceMetadata([input.service.serviceName], input.service.tags ?? [], input.service.iconUrl));
  const body: PaymentRequiredBody = {
    accepts: {
      scheme: 'exact',
      price: formatPrice(input.amount, asset.decimals),
      network,
      payTo: requirements.payTo,
      maxTimeoutSeconds,
      x402Version: 2,
      amount: requirements.amount,
      asset: requirements.asset,
      extra: { ...requirements.extra },
    },
    description,
    ...(input.extensions ? { extensions: structuredClone(input.extensions) } : {}),
  };
  return deepFreeze({
    requirements,
    paymentRequired: {
      x402Version: 2,
      resource,
      accepts: [{ ...requirements, extra: { ...requirements.extra } }],
      ...(input.extensions ? { extensions: structuredClone(input.extensions) } : {}),
    },
    body,
    asset,
  });
}

/**
 * The full HTTP 402 answer: status 402, the marketplace's JSON body, and the headers
 * `Content-Type: application/json` and `PAYMENT-REQUIRED` (base64 JSON v2 PaymentRequired, which
 * the reference v2 clients read). `error` (e.g. a facilitator reason) goes into both.
 *
 * @example
 * const terms = buildPaymentTerms({ amount: parsePrice('$0.001'), payTo, resourceUrl: 'https://skills.example/echo' });
 * const { status, headers, body } = paymentRequiredResponse(terms);
 * return Response.json(body, { status, headers }); // 402 with the JSON body and PAYMENT-REQUIRED
 */
export function paymentRequiredResponse(terms: PaymentTerms, error?: string): PaymentRequiredResponse {
  const paymentRequired: PaymentRequired = error === undefined ? terms.paymentRequired : { ...terms.paymentRequired, error };
  const body: PaymentRequiredBody = error === undefined ? terms.body : { ...terms.body, error };
  return {
    status: 402,
    headers: { 'Content-Type': 'application/json', [PAYMENT_REQUIRED_HEADER]: encodeBase64Json(paymentRequired) },
    body,
  };
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && jsonEqual((a as Record<string, unknown>)[k], rb[k]));
}

/**
 * Does a client's `accepted` answer our requirements? As the reference server: every core field
 * (all but `extra`) equal on both sides, with `asset` and `payTo` compared case-insensitively, and
 * our `extra` a subset of theirs.
 *
 * @example
 * const payment = decodePaymentPayload(header);
 * if (payment.x402Version === 2 && !acceptedMatches(payment.accepted, terms.requirements)) return reject('terms differ');
 */
export function acceptedMatches(accepted: unknown, requirements: PaymentRequirements): boolean {
  if (typeof accepted !== 'object' || accepted === null || Array.isArray(accepted)) return false;
  const theirs = accepted as Record<string, unknown>;
  const ours = requirements as unknown as Record<string, unknown>;
  const keys = new Set([...Object.keys(ours), ...Object.keys(theirs)]);
  keys.delete('extra');
  for (const key of keys) {
    const a = ours[key];
    const b = theirs[key];
    const equal =
      (key === 'asset' || key === 'payTo') && typeof a === 'string' && typeof b === 'string'
        ? a.toLowerCase() === b.toLowerCase()
        : jsonEqual(a, b);
    if (!equal) return false;
  }
  if (requirements.extra === undefined) return true;
  const extra = theirs.extra;
  if (typeof extra !== 'object' || extra === null) return false;
  const record = extra as Record<string, unknown>;
  return Object.entries(requirements.extra).every(([k, v]) => Object.hasOwn(record, k) && jsonEqual(v, record[k]));
}

/**
 * Does a decoded proof target these requirements? v2: {@link acceptedMatches}. v1 payloads carry
 * no `accepted`, so only scheme and network can be compared here (as the reference server does);
 * the facilitator's checks of recipient and value then carry the rest.
 *
 * @example
 * const read = readPaymentHeader(request.headers);
 * if (read.type === 'payment' && !paymentMatchesRequirements(read.payment, terms.requirements)) {
 *   return Response.json(paymentRequiredResponse(terms, 'payment does not match the terms').body, { status: 402 });
 * }
 */
export function paymentMatchesRequirements(payment: DecodedPayment, requirements: PaymentRequirements): boolean {
  if (payment.x402Version === 2) return acceptedMatches(payment.accepted, requirements);
  return payment.scheme === requirements.scheme && payment.network === requirements.network;
}
