import { FACILITATOR_REASONS } from 'skill-market/x402';

/**
 * The reason strings of the exact scheme: the reference exact-EVM vocabulary from the
 * x402 codec, plus the reference's token-domain reasons and a few of our own where none fits.
 */
export const REASONS = {
  ...FACILITATOR_REASONS,
  /** requirements.extra.name differs from the token's on-chain name(). */
  tokenNameMismatch: 'invalid_exact_evm_token_name_mismatch',
  /** requirements.extra.version differs from the token's on-chain version(). */
  tokenVersionMismatch: 'invalid_exact_evm_token_version_mismatch',
  /** The asset is not one this facilitator settles (its network's USDC or FACILITATOR_ASSETS). */
  assetNotAllowed: 'invalid_exact_evm_asset_not_allowed',
  /** The transfer succeeded without the Transfer event it should emit. */
  transferEventMismatch: 'invalid_exact_evm_transfer_event_mismatch',
  /** A sent transaction was never mined and the authorization expired. */
  transactionDropped: 'invalid_exact_evm_transaction_dropped',
  /** The payload's `accepted` is not the requirements (the skill server refuses it by the same rule). */
  acceptedMismatch: 'invalid_exact_evm_accepted_mismatch',
  /** Something on our side (RPC, database) failed before anything was sent. */
  unexpectedSettleError: 'unexpected_settle_error',
} as const;
