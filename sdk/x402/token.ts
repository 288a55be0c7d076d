/**
 * The token side of EIP-3009, one home for the SDK, the facilitator and the registry: the ABI
 * beyond ERC-20 (which is viem's `erc20Abi`), an authorization's single-use key, a payment's
 * fingerprint.
 */
import { parseAbi, sha256, stringToBytes } from 'viem';
import type { ParseAbi } from 'viem';
import type { Authorization } from './schemas';

const signatures = [
  'function version() view returns (string)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
] as const;

/**
 * EIP-3009 (FiatToken v2): `version`, `authorizationState`, `transferWithAuthorization`, `AuthorizationUsed`.
 *
 * @example
 * const tokenAbi = [...erc20Abi, ...eip3009Abi]; // erc20Abi from viem
 */
export const eip3009Abi: ParseAbi<typeof signatures> = parseAbi(signatures);

/**
 * An authorization's single-use key, lowercase: two proofs with one key move money once.
 *
 * @example
 * authorizationKey({ network, asset, payer: a.from, nonce: a.nonce }); // 'eip155:8453|0x…|0x…|0x…'
 */
export function authorizationKey(key: { network: string; asset: string; payer: string; nonce: string }): string {
  return `${key.network}|${key.asset}|${key.payer}|${key.nonce}`.toLowerCase();
}

/**
 * SHA-256 hex of `context`, the signed authorization and its signature (case-normalised).
 *
 * @example
 * paymentFingerprint(payment, [skillName, input]); // 64 hex digits
 */
export function paymentFingerprint(payment: { signature: string; authorization: Authorization }, context: readonly unknown[] = []): string {
  const a = payment.authorization;
  const fields = [...context, a.from.toLowerCase(), a.to.toLowerCase(), a.value, a.validAfter, a.validBefore, a.nonce.toLowerCase()];
  return sha256(stringToBytes(JSON.stringify([...fields, payment.signature.toLowerCase()]))).slice(2);
}
