/**
 * The errors of the consumer client. Every one is a {@link MarketError} with a machine `code`;
 * errors about a server's answer carry its HTTP `status` and a short excerpt of its `body`.
 * Errors raised after a proof was sent say whether money moved (`charged`) and carry the receipt.
 */
import type { ValueProblem } from '../json-schema/index';
import type { PaymentReceipt } from './types';

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
  | 'aborted';

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

/** The registry answered an error (`{error, code, requestId}`) or could not be reached. */
export class RegistryError extends MarketError {
  override name = 'RegistryError';
  /** The registry's machine code, e.g. `NOT_FOUND`, `UNAUTHORIZED`. */
  readonly registryCode: string | undefined;
  readonly requestId: string | undefined;

  constructor(
    code: 'registry_error' | 'skill_not_found',
    message: string,
    details: MarketErrorDetails & { registryCode?: string; requestId?: string },
  ) {
    super(code, message, details);
    this.registryCode = details.registryCode;
    this.requestId = details.requestId;
  }
}

/** The input was refused before any request to the skill: `problems` lists every violation. */
export class InputValidationError extends MarketError {
  override name = 'InputValidationError';
  constructor(
    readonly problems: ValueProblem[],
    slug: string,
  ) {
    const first = problems[0];
    super(
      'invalid_input',
      `Input refused by the inputSchema of ${slug}: ${first ? `${first.path} ${first.message}` : 'invalid'}${problems.length > 1 ? ` (+${problems.length - 1} more)` : ''}`,
      { slug },
    );
  }
}

/** Which term of a 402 answer disagreed with the listing. */
export type TermsField = 'scheme' | 'network' | 'payTo' | 'price' | 'asset' | 'maxTimeoutSeconds';

/** The skill server asked for other terms than the registry lists; nothing was signed. */
export class TermsMismatchError extends MarketError {
  override name = 'TermsMismatchError';
  constructor(
    readonly field: TermsField,
    readonly expected: string,
    readonly actual: string,
    slug: string,
    status = 402,
  ) {
    super('terms_mismatch', `Refused to pay ${slug}: the server asks for ${field} ${actual}, expected ${expected}`, { slug, status });
  }
}

/** A spending limit refused the call before anything was signed. Amounts in atomic units. */
export class SpendingLimitError extends MarketError {
  override name = 'SpendingLimitError';
  constructor(
    readonly limit: 'maxPrice' | 'budget',
    readonly price: bigint,
    /** maxPrice, or the budget's remaining amount. */
    readonly allowed: bigint,
    slug: string,
    message: string,
  ) {
    super(limit === 'maxPrice' ? 'max_price_exceeded' : 'budget_exceeded', message, { slug });
  }
}

/** The skill's handler failed; `message` is the skill's own error text. */
export class SkillCallError extends MarketError {
  override name = 'SkillCallError';
}
