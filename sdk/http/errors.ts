/**
 * The SDK's base errors. Every error the SDK throws is a {@link MarketError} with a machine
 * `code`; errors about a server's answer carry its HTTP `status` and a short excerpt of its
 * `body`. A registry's error answer is one class everywhere, {@link RegistryError}, carrying the
 * registry's `{error, code, requestId}`. Errors raised after a payment proof was sent say whether
 * money moved (`charged`); those of a paid call (with its receipt) live with the payments
 * (sdk/payment/errors.ts), above this file, which imports nothing of the SDK.
 */
import type { MarketErrorCode } from './error-codes';

export type { MarketErrorCode } from './error-codes';

/** Whether money left the wallet for a call that ended in an error. */
export type ChargeState = 'no' | 'yes' | 'unknown';

export interface MarketErrorDetails {
  status?: number;
  body?: string;
  slug?: string;
  charged?: ChargeState;
  cause?: unknown;
}

const EXCERPT_LENGTH = 240;

/** The first characters of a body, on one line, for error messages. */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_LENGTH ? `${flat.slice(0, EXCERPT_LENGTH)}…` : flat;
}

/**
 * Base class of every error the SDK throws (the consumer client, the creator's server, the x402
 * codec, the wallet): `code` says which, one of {@link MarketErrorCode}.
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

  constructor(code: MarketErrorCode, message: string, details: MarketErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = details.status;
    this.body = details.body === undefined ? undefined : excerpt(details.body);
    this.slug = details.slug;
    this.charged = details.charged ?? 'no';
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
