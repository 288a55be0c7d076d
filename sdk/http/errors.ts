/**
 * The SDK's base errors. Every error the SDK throws is a {@link MarketError} with a machine
 * `code`; errors about a server's answer carry its HTTP `status` and a short excerpt of its
 * `body`. A registry's error answer is one class everywhere, {@link RegistryError}, carrying the
 * registry's `{error, code, requestId}`. Errors raised after a payment proof was sent say whether
 * money moved (`charged`) and carry the receipt.
 */
import type { PaymentReceipt } from '../client/types';

/** Machine codes of {@link MarketError}. */
export type MarketErrorCode =
  /** The registry answered with an error status. */
  | 'registry_error'
  /** The registry has no skill with that slug (404). */
  | 'skill_not_found'
  /** The skill is listed but switched off (`isActive: false`); nothing was sent to it. */
  | 'skill_inactive'
  /** A registry or skill server answered a body this client cannot trust. */
  | 'invalid_response'
  /** The input does not satisfy the skill's `inputSchema`; no request was made to the skill. */
  | 'invalid_input'
  /** `call()` needs a wallet; discovery does not. */
  | 'wallet_required'
  /** Favorites (and usage records) need `apiKey`. */
  | 'credentials_required'
  /** The skill is listed on a network this client does not pay on. */
  | 'network_not_allowed'
  /** The skill's endpoint is plain http on a non-loopback host (set `allowHttp` to permit). */
  | 'insecure_endpoint'
  /** The 402 terms differ from the registry listing (payTo, price, network, asset, …). */
  | 'terms_mismatch'
  /** The price is above `maxPrice`; nothing was signed. */
  | 'max_price_exceeded'
  /** The call would take spending past `budget`; nothing was signed. */
  | 'budget_exceeded'
  /** The skill server refused the signed payment (402 after the proof). */
  | 'payment_rejected'
  /**
   * A payment channel's server answered what this client cannot accept (a charge above the price,
   * a cumulative charge that is not its own record plus the charge, another channel): no voucher
   * is signed on that channel any more (withdraw its deposit with `market channels`).
   */
  | 'channel_stopped'
  /** A payment channel needs a deposit above `maxDeposit`; nothing was signed. */
  | 'max_deposit_exceeded'
  /**
   * The skill ran but its payment was not confirmed in time (`pendingTimeoutMs`), or the server
   * could not determine it: `charged` is `'unknown'` (or `'yes'` when the chain shows it spent).
   */
  | 'payment_pending'
  /** The skill's handler failed (HTTP 500 `{success:false, error}`); the message is the skill's. */
  | 'skill_failed'
  /** The skill server timed out (HTTP 504). */
  | 'skill_timeout'
  /** The skill server answered an unexpected status. */
  | 'skill_error'
  /** No answer after every retry (connection refused, dropped, timed out). */
  | 'network_error'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** Something shaped like a private key or recovery phrase was about to be sent; nothing was. */
  | 'private_key_refused';

/** Whether money left the wallet for a call that ended in an error. */
export type ChargeState = 'no' | 'yes' | 'unknown';

export interface MarketErrorDetails {
  status?: number;
  body?: string;
  slug?: string;
  charged?: ChargeState;
  receipt?: PaymentReceipt;
  cause?: unknown;
}

const EXCERPT_LENGTH = 240;

/** The first characters of a body, on one line, for error messages. */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_LENGTH ? `${flat.slice(0, EXCERPT_LENGTH)}…` : flat;
}

/**
 * Base class of every error the client throws.
 *
 * @example
 * try { await market.call('translate', { text }) }
 * catch (e) { if (e instanceof MarketError && e.code === 'terms_mismatch') console.error(e.message) }
 */
export class MarketError extends Error {
  override name = 'MarketError';
  readonly code: MarketErrorCode;
  /** HTTP status of the answer that caused the error, when there was one. */
  readonly status: number | undefined;
  /** Excerpt (at most 240 characters) of the answer's body. */
  readonly body: string | undefined;
  /** Slug of the skill being called or looked up. */
  readonly slug: string | undefined;
  /**
   * `'no'` when nothing was paid (every refusal before signing, a refused or failed payment),
   * `'yes'` or `'unknown'` after a proof that may have been spent (no answer, payment still
   * pending, "nonce already used"); with `rpcUrl` the chain turns `'unknown'` into `'yes'` or `'no'`.
   */
  readonly charged: ChargeState;
  /** The settlement receipt, when the server sent one with the error. */
  readonly receipt: PaymentReceipt | undefined;

  constructor(code: MarketErrorCode, message: string, details: MarketErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = details.status;
    this.body = details.body === undefined ? undefined : excerpt(details.body);
    this.slug = details.slug;
    this.charged = details.charged ?? (details.receipt ? 'yes' : 'no');
    this.receipt = details.receipt;
  }
}

/**
 * A registry answered an error (`{error, code, requestId}`), or could not be reached (`status`
 * 0). The one error class of every registry client (consumer, creator, wallets, CLI, MCP, pages).
 *
 * @example
 * try {
 *   await market.info('weather-now');
 * } catch (error) {
 *   if (error instanceof RegistryError && error.code === 'skill_not_found') console.log('no such skill');
 *   else if (error instanceof RegistryError && error.retryable) console.log(`registry busy, request ${error.requestId}`);
 *   else throw error;
 * }
 */
export class RegistryError extends MarketError {
  override name = 'RegistryError';
  /** The registry's own text, e.g. `API key revoked` (the registry API's wording). */
  readonly error: string | undefined;
  /** The registry's machine code, e.g. `NOT_FOUND`, `UNAUTHORIZED`, `VALIDATION`. */
  readonly registryCode: string | undefined;
  /** The request id the registry gave the request (its X-Request-Id), for support. */
  readonly requestId: string | undefined;
  /** The registry's Retry-After, in ms, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: 'registry_error' | 'skill_not_found',
    message: string,
    details: MarketErrorDetails & { error?: string; registryCode?: string; requestId?: string; retryAfterMs?: number },
  ) {
    super(code, message, details);
    this.error = details.error;
    this.registryCode = details.registryCode;
    this.requestId = details.requestId;
    this.retryAfterMs = details.retryAfterMs;
  }

  /** No answer (status 0), 429 or 5xx: the same request may succeed later. */
  get retryable(): boolean {
    const status = this.status ?? 0;
    return status === 0 || status === 429 || status >= 500;
  }
}

/** No answer came after every attempt (refused, reset, dropped while reading, timed out). */
export class NoAnswerError extends MarketError {
  override name = 'NoAnswerError';
}
