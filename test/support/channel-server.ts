/**
 * Skill servers that sell over payment channels on the local chain, and the x402 reference client
 * that pays them: serve()'s channel options with a file store in a test folder, @x402/fetch with
 * @x402/evm's batch-settlement client recording the proofs it sends, and vouchers signed anew
 * from one of those proofs.
 *
 * @example
 * const server = await serve(skills, loopbackServeOptions(chain, facilitator.url, payee, { channels: fileChannels(authorizer, folder) }));
 * const { pay, proofs } = referenceChannelClient(chain, payer, { depositMultiplier: 10 });
 * await pay(`${server.url}/echo`, jsonPost({ i: 1 }));
 * const next = await voucherProof(chain, proofs.at(-1)!, payer, 2_000n);
 */
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { LocalAccount } from 'viem';
import type { ChannelSettingsInput } from 'skill-market/creator';
import { batchSettlementDomain, decodeBase64Json, encodeBase64Json, voucherTypes } from 'skill-market/x402';
import type { LocalChain, TestAccount } from './chain';

/**
 * Channels whose receiver authorizer is `authorizer` (it signs claims and refunds in the server),
 * kept in `<folder>/channels`, with the shortest withdraw delay (900 s) and claims within 10 minutes.
 */
export const fileChannels = (authorizer: TestAccount, folder: string): ChannelSettingsInput => ({
  receiverAuthorizerKey: authorizer.privateKey,
  store: join(folder, 'channels'),
  withdrawDelay: 900,
  claimWithinMs: 600_000,
});

/**
 * @x402/fetch paying as `account` with @x402/evm's batch-settlement client, depositing for
 * `depositMultiplier` calls, spending only the chain's token; `proofs` holds every
 * PAYMENT-SIGNATURE it sent, in order. `fetch` is what it sends through (default the global).
 */
export function referenceChannelClient(
  chain: LocalChain,
  account: TestAccount,
  { depositMultiplier, fetch: send = fetch }: { depositMultiplier: number; fetch?: typeof fetch },
) {
  const signer = toClientEvmSigner(account, chain.publicClient as unknown as Parameters<typeof toClientEvmSigner>[1]);
  const scheme = new BatchSettlementEvmScheme(signer, { depositPolicy: { depositMultiplier } });
  const client = new x402Client().register(chain.network, scheme);
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  const proofs: string[] = [];
  const recording = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = input instanceof Request ? new Request(input, init) : new Request(String(input), init);
    const proof = request.headers.get('PAYMENT-SIGNATURE');
    if (proof) proofs.push(proof);
    return send(request);
  }) as typeof fetch;
  return { pay: wrapFetchWithPayment(recording, client), proofs, scheme };
}

/**
 * A voucher proof on the channel of `proof` (one the reference client sent, deposit or voucher) for
 * `maxClaimableAmount`, signed by `signer`: the payer's next voucher, one that skips ahead, or,
 * signed by another account, a forged one.
 */
export async function voucherProof(chain: LocalChain, proof: string, signer: LocalAccount, maxClaimableAmount: bigint): Promise<string> {
  const sent = decodeBase64Json(proof, 'malformed_payment', 'proof') as Record<string, any>;
  const { channelConfig, voucher } = sent.payload;
  const signature = await signer.signTypedData({
    domain: batchSettlementDomain(chain.chainId),
    types: voucherTypes,
    primaryType: 'Voucher',
    message: { channelId: voucher.channelId, maxClaimableAmount },
  });
  return encodeBase64Json({
    ...sent,
    payload: { type: 'voucher', channelConfig, voucher: { ...voucher, maxClaimableAmount: `${maxClaimableAmount}`, signature } },
  });
}
