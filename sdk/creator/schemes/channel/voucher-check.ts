/**
 * The skill server's check of a voucher's signature, on every channel call: x402/signer-keys.ts,
 * refusing a high s as the contract's ECDSA check does.
 */
import type { Address, Hex } from 'viem';
import { SignerKeys } from '../../../x402/signer-keys';
import { voucherDigestBytes } from '../../../x402/voucher-signature';

/** The payers' keys: their multiples made at the first voucher (a channel carries many). */
const payerKeys = new SignerKeys({ keys: 1024, multiplesAfter: 1, lowS: true });

/**
 * Whether `signer` signed the voucher (channelId, maxClaimableAmount) on `chainId` with this
 * 65-byte signature, exactly as the contract's ecrecover would see it (r, s low, v).
 *
 * @example voucherSignedBy(channelId, 3000n, 8453, signature, config.payerAuthorizer) // true or false
 */
export function voucherSignedBy(channelId: Hex, maxClaimableAmount: bigint, chainId: number, signature: Hex, signer: Address): boolean {
  return payerKeys.signedBy(voucherDigestBytes(channelId, maxClaimableAmount, chainId), signature, signer);
}
