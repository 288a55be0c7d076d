/**
 * Reasons of our own for the `batch-settlement` scheme, where the spec names none (its codes are
 * BATCH_SETTLEMENT_REASONS of the x402 module).
 */
export const CHANNEL_REASONS = {
  /** The deposit's ERC-3009 authorization was already presented here (single use across instances). */
  depositAuthorizationUsed: 'invalid_batch_settlement_evm_deposit_authorization_used',
  /** The token is not one this facilitator settles (its network's USDC or FACILITATOR_ASSETS). */
  assetNotAllowed: 'invalid_batch_settlement_evm_asset_not_allowed',
  /** A refund our receiver authorizer would sign came without a key bound to the channel's receiver. */
  refundReceiverConsent: 'invalid_batch_settlement_evm_refund_receiver_consent_required',
  /** A claim our receiver authorizer would sign came without a key bound to every row's receiver (and the facilitator is not open). */
  claimReceiverConsent: 'invalid_batch_settlement_evm_claim_receiver_consent_required',
  /** A claim row is not above the channel's claimed total on chain: it would claim nothing. */
  claimNotAboveClaimed: 'invalid_batch_settlement_evm_claim_not_above_claimed',
  /** A claim names one channel in more than one row. */
  claimDuplicateChannel: 'invalid_batch_settlement_evm_claim_duplicate_channel',
} as const;
