/**
 * The reason strings of the upto scheme: the reference upto-EVM and Permit2 vocabulary of the x402
 * EVM package where one fits, and a few of our own.
 */
export const REASONS = {
  invalidScheme: 'invalid_upto_evm_scheme',
  networkMismatch: 'invalid_upto_evm_network_mismatch',
  invalidSpender: 'invalid_permit2_spender',
  recipientMismatch: 'invalid_permit2_recipient_mismatch',
  facilitatorMismatch: 'upto_facilitator_mismatch',
  deadlineExpired: 'permit2_deadline_expired',
  notYetValid: 'permit2_not_yet_valid',
  amountMismatch: 'permit2_amount_mismatch',
  tokenMismatch: 'permit2_token_mismatch',
  invalidSignature: 'invalid_permit2_signature',
  allowanceRequired: 'permit2_allowance_required',
  insufficientBalance: 'permit2_insufficient_balance',
  simulationFailed: 'permit2_simulation_failed',
  nonceUsed: 'permit2_invalid_nonce',
  settlementExceedsAmount: 'invalid_upto_evm_payload_settlement_exceeds_amount',
  transactionFailed: 'invalid_upto_evm_transaction_failed',
  settlementPending: 'settlement_pending',
  /** The asset is not one this facilitator settles. */
  assetNotAllowed: 'invalid_upto_evm_asset_not_allowed',
  /** The payload's `accepted` names another asset, recipient or network than the requirements. */
  acceptedMismatch: 'invalid_upto_evm_accepted_mismatch',
  /** Something on our side (RPC, database) failed before anything was sent. */
  unexpectedSettleError: 'unexpected_settle_error',
} as const;
