/**
 * The reference x402 client as a buyer uses it: `@x402/fetch` around `@x402/core`'s client with
 * `@x402/evm`'s exact scheme, paying only in the chain's test USDC.
 */
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { LocalChain, TestAccount } from './chain';

/** A fetch that pays 402s by `exact` from `account` on `chain`. */
export function referenceExactFetch(chain: LocalChain, account: TestAccount) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  return wrapFetchWithPayment(fetch, client);
}
