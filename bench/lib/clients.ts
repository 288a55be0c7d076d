/** The paying clients of the paid-call benches: ours (SkillMarket) and the x402 reference (@x402/fetch). */
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { type PaymentMode, SkillMarket } from 'skill-market';
import type { LocalChain, TestAccount } from '../../test/support/chain';
import type { Pay } from './paid-runs';

export function ourClients(
  chain: LocalChain,
  apiUrl: string,
  slug: string,
  payers: TestAccount[],
  mode: PaymentMode,
  fetchImpl: typeof fetch,
): Pay[] {
  const asset = {
    network: chain.network,
    address: chain.token.address,
    name: chain.token.name,
    version: chain.token.version,
    decimals: chain.token.decimals,
  };
  return payers.map((wallet) => {
    // The exact path: one transfer per call (bench/channels.ts measures payment channels).
    const market = new SkillMarket({ apiUrl, wallet, network: chain.network, assets: [asset], mode, payment: 'exact', fetch: fetchImpl });
    return (i) =>
      market.call(slug, { i }).then(
        () => true,
        () => false,
      );
  });
}

export function referenceClients(chain: LocalChain, url: string, payers: TestAccount[], fetchImpl: typeof fetch): Pay[] {
  return payers.map((signer) => {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer });
    client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
    const pay = wrapFetchWithPayment(fetchImpl, client);
    return (i) =>
      pay(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ i }) }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status === 200;
        },
        () => false,
      );
  });
}
