/**
 * Typed ABIs of Permit2.sol (its signature-transfer half) and x402UptoPermit2Proxy.sol, written by
 * hand so viem infers argument and return types. test/chain/upto/abi.test.ts checks them item by
 * item against what solc produces, and checks that every item @x402/evm ships is here unchanged.
 */
import { parseAbi } from 'viem';

const structs = [
  'struct TokenPermissions { address token; uint256 amount; }',
  'struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }',
  'struct SignatureTransferDetails { address to; uint256 requestedAmount; }',
] as const;

export const permit2Abi = parseAbi([
  ...structs,
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function nonceBitmap(address, uint256) view returns (uint256)',
  'function permitTransferFrom(PermitTransferFrom permit, SignatureTransferDetails transferDetails, address owner, bytes signature)',
  'function permitWitnessTransferFrom(PermitTransferFrom permit, SignatureTransferDetails transferDetails, address owner, bytes32 witness, string witnessTypeString, bytes signature)',
  'function invalidateUnorderedNonces(uint256 wordPos, uint256 mask)',
  'event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask)',
  'error SignatureExpired(uint256 signatureDeadline)',
  'error InvalidAmount(uint256 maxAmount)',
  'error InvalidNonce()',
  'error InvalidSignature()',
  'error TokenTransferFailed(address token)',
]);

export const uptoProxyAbi = parseAbi([
  ...structs,
  'struct Witness { address to; address facilitator; uint256 validAfter; }',
  'struct EIP2612Permit { uint256 value; uint256 deadline; bytes32 r; bytes32 s; uint8 v; }',
  'function PERMIT2() view returns (address)',
  'function WITNESS_TYPEHASH() view returns (bytes32)',
  'function WITNESS_TYPE_STRING() view returns (string)',
  'function settle(PermitTransferFrom permit, uint256 amount, address owner, Witness witness, bytes signature)',
  'function settleWithPermit(EIP2612Permit permit2612, PermitTransferFrom permit, uint256 amount, address owner, Witness witness, bytes signature)',
  'event Settled()',
  'event SettledWithPermit()',
  'error AmountExceedsPermitted()',
  'error InvalidDestination()',
  'error InvalidOwner()',
  'error InvalidPermit2Address()',
  'error PaymentTooEarly()',
  'error Permit2612AmountMismatch()',
  'error ReentrancyGuardReentrantCall()',
  'error UnauthorizedFacilitator()',
]);
