/**
 * Typed ABIs of x402BatchSettlement.sol and ERC3009DepositCollector.sol, written by hand so viem
 * infers argument and return types. test/chain/batch-settlement/abi.test.ts checks them item by
 * item against what solc produces, and checks that every item @x402/evm ships is here unchanged.
 */
import { parseAbi } from 'viem';

const structs = [
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'struct Voucher { ChannelConfig channel; uint128 maxClaimableAmount; }',
  'struct VoucherClaim { Voucher voucher; bytes signature; uint128 totalClaimed; }',
] as const;

export const batchSettlementAbi = parseAbi([
  ...structs,
  // The interface of the scheme (the ABI @x402/evm ships)
  'function multicall(bytes[] data) returns (bytes[] results)',
  'function deposit(ChannelConfig config, uint128 amount, address collector, bytes collectorData)',
  'function claim(VoucherClaim[] voucherClaims)',
  'function claimWithSignature(VoucherClaim[] voucherClaims, bytes authorizerSignature)',
  'function settle(address receiver, address token)',
  'function initiateWithdraw(ChannelConfig config, uint128 amount)',
  'function finalizeWithdraw(ChannelConfig config)',
  'function refund(ChannelConfig config, uint128 amount)',
  'function refundWithSignature(ChannelConfig config, uint128 amount, uint256 nonce, bytes receiverAuthorizerSignature)',
  'function getChannelId(ChannelConfig config) view returns (bytes32)',
  'function CHANNEL_CONFIG_TYPEHASH() view returns (bytes32)',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
  'function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)',
  'function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) view returns (bytes32)',
  'function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) view returns (bytes32)',
  'function refundNonce(bytes32 channelId) view returns (uint256)',
  'function getClaimBatchDigest(VoucherClaim[] voucherClaims) view returns (bytes32)',
  'event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)',
  // Named by the specification but not in the shipped ABI: our signatures
  'function MIN_WITHDRAW_DELAY() view returns (uint40)',
  'function MAX_WITHDRAW_DELAY() view returns (uint40)',
  'event ChannelCreated(bytes32 indexed channelId, ChannelConfig config)',
  'event ChannelClosed(bytes32 indexed channelId, ChannelConfig config)',
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 balance)',
  'event Claimed(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 totalClaimed)',
  'event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter)',
  'event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount)',
  'event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount)',
  'error Reentrancy()',
  'error ZeroAmount()',
  'error InvalidChannelConfig()',
  'error WithdrawDelayOutOfRange(uint40 withdrawDelay)',
  'error DepositAmountMismatch(uint128 expected, uint256 received)',
  'error Unauthorized(address caller)',
  'error EmptyClaims()',
  'error ReceiverAuthorizerMismatch()',
  'error InvalidAuthorizerSignature()',
  'error InvalidVoucherSignature(bytes32 channelId)',
  'error ClaimExceedsVoucher(bytes32 channelId, uint128 totalClaimed, uint128 maxClaimableAmount)',
  'error ClaimExceedsBalance(bytes32 channelId, uint128 totalClaimed, uint128 balance)',
  'error InvalidRefundNonce(bytes32 channelId, uint256 expected, uint256 provided)',
  'error AmountExceedsUnclaimed(uint128 amount, uint128 available)',
  'error WithdrawalAlreadyPending(bytes32 channelId)',
  'error NoPendingWithdrawal(bytes32 channelId)',
  'error WithdrawalNotReady(bytes32 channelId, uint256 readyAt)',
  'error TokenTransferFailed(address token)',
]);

export const erc3009DepositCollectorAbi = parseAbi([
  'function BATCH_SETTLEMENT() view returns (address)',
  'function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes collectorData)',
  'error OnlyBatchSettlement(address caller)',
  'error TokenTransferFailed(address token)',
]);
