/**
 * Typed ABIs of the test contracts, written by hand so viem infers argument and return types.
 * test/chain/abi.test.ts checks them item by item against what solc produces.
 */
import { parseAbi } from 'viem';

export { usdCoinAbi } from '../../../src/chain/token';

export const testSmartWalletAbi = parseAbi([
  'constructor(address owner_)',
  'function owner() view returns (address)',
  'function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)',
  'function execute(address target, uint256 value, bytes data) returns (bytes)',
  'receive() external payable',
]);

/** The part of Multicall3 that the fixture installs at its canonical address (see Multicall3.sol). */
export const multicall3Abi = parseAbi([
  'struct Call { address target; bytes callData; }',
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
  'function tryAggregate(bool requireSuccess, Call[] calls) payable returns (Result[] returnData)',
  'function getBlockNumber() view returns (uint256)',
  'function getCurrentBlockTimestamp() view returns (uint256)',
]);

/** Multicall3's address on every public chain, and on our local chains. */
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** EIP-712 types of an EIP-3009 transfer authorization: the SDK's own, so tests sign what it signs. */
export { TRANSFER_WITH_AUTHORIZATION_TYPES as transferWithAuthorizationTypes } from 'skill-market/x402';
