/**
 * What a claim must pass before anything is signed or sent:
 * - the receivers' consent, when our receiver authorizer is to sign it: our signature moves a
 *   channel's claimed total to whatever the row says (up to the payer's voucher), and only the
 *   receiver's server knows what it charged. Every row's receiver must have bound the presented
 *   key (FACILITATOR_RECEIVER_KEYS); a claim may span receivers only when one key is bound to all.
 *   An open facilitator (FACILITATOR_OPEN, as the x402 reference facilitators) skips this;
 * - every row claims something: no channel twice, and each row above the channel's claimed total
 *   on chain. The contract lets a stale row through as a no-op, which the relayer would pay for;
 *   requests merged into one transaction keep each channel's highest row only.
 */
import { getAddress, type Hex, type PublicClient } from 'viem';
import { channelIdOf, type VoucherClaim } from 'skill-market/x402';
import { batchSettlementAbi } from '../../../chain/batch-settlement';
import type { Rejection } from '../../chain';
import { SETTLEMENT_CONTRACT } from './contract';
import { CHANNEL_REASONS } from './reasons';
import type { ReceiverKeys } from './receiver-keys';

/** Why our authorizer may not sign these rows for the holder of `bearer`, if so. */
export function claimConsent(
  keys: ReceiverKeys,
  open: boolean,
  claims: readonly VoucherClaim[],
  bearer: string | undefined,
): Rejection | undefined {
  if (open) return undefined;
  const refused = claims.find((c) => !keys.consents(c.voucher.channel.receiver, bearer));
  if (!refused) return undefined;
  const receiver = getAddress(refused.voucher.channel.receiver);
  return {
    reason: CHANNEL_REASONS.claimReceiverConsent,
    message: `A claim this facilitator's receiverAuthorizer signs needs the receiver's consent: send Authorization: Bearer <a key bound to ${receiver} in FACILITATOR_RECEIVER_KEYS> (every row's receiver), or sign the claim with the server's own receiverAuthorizer (claimAuthorizerSignature)`,
  };
}

/** Why the rows do not each raise a distinct channel's claimed total, if so (reads the chain). */
export async function noOpClaim(client: PublicClient, chainId: number, claims: readonly VoucherClaim[]): Promise<Rejection | undefined> {
  const ids = claims.map((c) => channelIdOf(c.voucher.channel, chainId).toLowerCase() as Hex);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) {
    return { reason: CHANNEL_REASONS.claimDuplicateChannel, message: `The channel ${twice} is claimed more than once in this claim` };
  }
  const claimed = await Promise.all(
    ids.map(async (id) => {
      const [, total] = await client.readContract({
        address: SETTLEMENT_CONTRACT,
        abi: batchSettlementAbi,
        functionName: 'channels',
        args: [id],
      });
      return total;
    }),
  );
  const stale = claims.findIndex((c, i) => BigInt(c.totalClaimed) <= (claimed[i] as bigint));
  if (stale < 0) return undefined;
  return {
    reason: CHANNEL_REASONS.claimNotAboveClaimed,
    message: `Row ${stale} claims ${claims[stale]?.totalClaimed} on channel ${ids[stale]}, not above the ${claimed[stale]} already claimed there: it would claim nothing`,
  };
}

/**
 * The rows of several claim requests sent as one transaction, each channel once: its highest row
 * (a lower one of the same channel would claim nothing after it). Two requests for one channel
 * meet when a server asks again before its first claim went out.
 */
export function highestPerChannel(claims: readonly VoucherClaim[], chainId: number): VoucherClaim[] {
  const rows = new Map<string, VoucherClaim>();
  for (const c of claims) {
    const id = channelIdOf(c.voucher.channel, chainId).toLowerCase();
    const kept = rows.get(id);
    if (!kept || BigInt(c.totalClaimed) > BigInt(kept.totalClaimed)) rows.set(id, c);
  }
  return [...rows.values()];
}
