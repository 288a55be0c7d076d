/**
 * Local-chain test fixture: anvil + our EIP-3009 USDC + the x402 batch-settlement contracts +
 * funded accounts + viem clients, and helpers to drive payment channels directly.
 * Start one chain per test file with `startChain()` and `stop()` it in `afterAll`.
 */
export { type LocalChain, type StartChainOptions, type TestAccount, startChain } from './anvil';
export {
  MULTICALL3_ADDRESS,
  multicall3Abi,
  testSmartWalletAbi,
  transferWithAuthorizationTypes,
  usdCoinAbi,
} from './abi';
export {
  type Authorization,
  type SignedAuthorization,
  bytesArgs,
  randomNonce,
  signAuthorization,
  vrsArgs,
} from './authorization';
export {
  type ClaimRow,
  chainTime,
  channelConfig,
  channelState,
  channelTotals,
  claimRow,
  depositToChannel,
  type OpenChannel,
  openChannel,
  receiverState,
  settlementEvents,
  settlementRevert,
  settlementTx,
  signClaimBatch,
  signDeposit,
  signDepositAuthorization,
  signRefund,
  signVoucher,
} from './channels';
export { type CompiledContracts, compileContracts } from './compile';
export { anvilBinary } from '../../../src/chain/anvil';
