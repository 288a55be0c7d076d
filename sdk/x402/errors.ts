/**
 * The one error type of the x402 module, plus the reason strings the reference facilitator
 * (`@x402/evm` exact scheme) answers with, so ours speaks the same vocabulary.
 */

import type { X402ErrorCode } from '../http/error-codes';
import { MarketError } from '../http/errors';

export type { X402ErrorCode } from '../http/error-codes';

/**
 * The typed error thrown (or returned inside a result union) by every function of this module.
 *
 * @example
 * try { parsePrice("$1,000") } catch (e) { if (e instanceof X402Error) console.log(e.code) } // "invalid_price"
 */
export class X402Error extends MarketError {
  override readonly name = 'X402Error';
  declare readonly code: X402ErrorCode;

  constructor(code: X402ErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * True when `value` is an {@link X402Error}, optionally with the given code.
 *
 * @example
 * try {
 *   parsePrice(input);
 * } catch (error) {
 *   if (isX402Error(error, 'invalid_price')) return new Response(error.message, { status: 400 });
 *   throw error;
 * }
 */
export function isX402Error(value: unknown, code?: X402ErrorCode): value is X402Error {
  return value instanceof X402Error && (code === undefined || value.code === code);
}

/**
 * Reason strings of the reference exact-EVM facilitator (`invalidReason` of /verify,
 * `errorReason` of /settle). Clients treat them as opaque strings; use these where they fit.
 *
 * @example
 * const verified = parseVerifyResponse(await (await fetch(`${facilitatorUrl}/verify`, { method: 'POST', body })).json());
 * if (verified.invalidReason === FACILITATOR_REASONS.insufficientBalance) console.log('top up the payer wallet');
 */
export const FACILITATOR_REASONS = {
  invalidScheme: 'invalid_exact_evm_scheme',
  networkMismatch: 'invalid_exact_evm_network_mismatch',
  missingEip712Domain: 'invalid_exact_evm_missing_eip712_domain',
  invalidSignature: 'invalid_exact_evm_signature',
  recipientMismatch: 'invalid_exact_evm_recipient_mismatch',
  validBefore: 'invalid_exact_evm_payload_authorization_valid_before',
  validAfter: 'invalid_exact_evm_payload_authorization_valid_after',
  valueMismatch: 'invalid_exact_evm_payload_authorization_value_mismatch',
  nonceAlreadyUsed: 'invalid_exact_evm_nonce_already_used',
  insufficientBalance: 'invalid_exact_evm_insufficient_balance',
  simulationFailed: 'invalid_exact_evm_transaction_simulation_failed',
  transactionFailed: 'invalid_exact_evm_transaction_failed',
  assetNotDeployed: 'asset_not_deployed_contract',
  settlementPending: 'settlement_pending',
  /** One of the payer's settlements reverted after it was answered (e.g. they moved their funds away). */
  payerReverted: 'invalid_exact_evm_payer_reverted_settlement',
} as const;

/** One of the {@link FACILITATOR_REASONS} strings. */
export type FacilitatorReason = (typeof FACILITATOR_REASONS)[keyof typeof FACILITATOR_REASONS];
