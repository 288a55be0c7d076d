/**
 * The paying clients of the paid-call benches, one per payer: ours (SkillMarket, exact or over
 * channels) and the x402 reference (@x402/fetch, exact or with @x402/evm's batch-settlement client).
 */
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { type PaymentMode, SkillMarket, type SkillMarketOptions } from 'skill-market';
import type { LocalChain, TestAccount } from '../../test/support/chain';
import { type Pay, PRICE } from './paid-runs';

/** SkillMarket calling `slug` as `wallet` in the chain's token; `options` say how it pays. */
function marketPay(chain: LocalChain, slug: string, options: Omit<SkillMarketOptions, 'network' | 'assets'>): Pay {
  const asset = {
    network: chain.network,
    address: chain.token.address,
    name: chain.token.name,
    version: chain.token.version,
    decimals: chain.token.decimals,
  };
  const market = new SkillMarket({ network: chain.network, assets: [asset], ...options });
  return (i) =>
    market.call(slug, { i }).then(
      () => true,
      () => false,
    );
}

/** A paying fetch POSTing `{ i }` to `url`, reading the whole answer. */
function postPay(pay: (url: string, init: RequestInit) => Promise<Response>, url: string): Pay {
  return (i) =>
    pay(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ i }) }).then(
      async (r) => {
        await r.arrayBuffer();
        return r.status === 200;
      },
      () => false,
    );
}

/** @x402/fetch for `client`, spending only the chain's token. */
function referencePay(chain: LocalChain, client: x402Client, url: string, fetchImpl: typeof fetch): Pay {
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  return postPay(wrapFetchWithPayment(fetchImpl, client), url);
}

export function ourClients(
  chain: LocalChain,
  apiUrl: string,
  slug: string,
  payers: TestAccount[],
  mode: PaymentMode,
  fetchImpl: typeof fetch,
): Pay[] {
  // The exact path: one transfer per call (ourChannelClients measures payment channels).
  return payers.map((wallet) => marketPay(chain, slug, { apiUrl, wallet, mode, payment: 'exact', fetch: fetchImpl }));
}

/**
 * SkillMarket paying over channels, one per payer, each depositing for `calls` calls at once (as
 * the batch reference's clients are told to), bounded by `calls` × price.
 */
export function ourChannelClients(
  chain: LocalChain,
  apiUrl: string,
  slug: string,
  payers: TestAccount[],
  calls: number,
  fetchImpl: typeof fetch,
): Pay[] {
  return payers.map((wallet) =>
    marketPay(chain, slug, {
      apiUrl,
      wallet,
      mode: 'fast',
      payment: 'channel',
      maxDeposit: `$${(Number(BigInt(calls) * PRICE) / 1e6).toFixed(6)}`,
      depositCalls: calls,
      rpcUrl: chain.rpcUrl,
      fetch: fetchImpl,
    }),
  );
}

export function referenceClients(chain: LocalChain, url: string, payers: TestAccount[], fetchImpl: typeof fetch): Pay[] {
  return payers.map((signer) => {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer });
    return referencePay(chain, client, url, fetchImpl);
  });
}

/** @x402/fetch with @x402/evm's batch-settlement client, one per payer, each depositing for `calls` calls at once. */
export function batchReferenceClients(
  chain: LocalChain,
  url: string,
  payers: TestAccount[],
  calls: number,
  fetchImpl: typeof fetch,
): Pay[] {
  return payers.map((payer) => {
    const signer = toClientEvmSigner(payer, chain.publicClient as unknown as Parameters<typeof toClientEvmSigner>[1]);
    const client = new x402Client().register(chain.network, new BatchClientScheme(signer, { depositPolicy: { depositMultiplier: calls } }));
    return referencePay(chain, client, url, fetchImpl);
  });
}
