/**
 * The facilitator's receiver authorizer: the key a resource server may name as its channels'
 * `receiverAuthorizer` (advertised in /supported), which signs the EIP-712 `ClaimBatch` and
 * `Refund` authorizations the contract checks. Its private key never leaves this object.
 */
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sameAddress, type VoucherClaim } from 'skill-market/x402';
import { batchSettlementDomain, channelIdOf, claimBatchTypes, refundTypes } from '../../../chain/batch-settlement';

export interface ReceiverAuthorizer {
  readonly address: Address;
  /** True when `address` is this authorizer. */
  is(address: string): boolean;
  signClaims(claims: readonly VoucherClaim[]): Promise<Hex>;
  signRefund(channelId: Hex, nonce: bigint, amount: bigint): Promise<Hex>;
}

export function createReceiverAuthorizer(privateKey: Hex, chainId: number): ReceiverAuthorizer {
  const account = privateKeyToAccount(privateKey);
  const domain = batchSettlementDomain(chainId);
  return {
    address: account.address,
    is: (address) => sameAddress(address, account.address),
    signClaims: (claims) =>
      account.signTypedData({
        domain,
        types: claimBatchTypes,
        primaryType: 'ClaimBatch',
        message: {
          claims: claims.map((c) => ({
            channelId: channelIdOf(c.voucher.channel, chainId),
            maxClaimableAmount: BigInt(c.voucher.maxClaimableAmount),
            totalClaimed: BigInt(c.totalClaimed),
          })),
        },
      }),
    signRefund: (channelId, nonce, amount) =>
      account.signTypedData({ domain, types: refundTypes, primaryType: 'Refund', message: { channelId, nonce, amount } }),
  };
}
