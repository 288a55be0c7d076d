/**
 * What the reference stacks (stack.ts, batch-stack.ts) share: their environment, the local chain's
 * network, the relayer's facilitator signer, the echo skill's price and its handler.
 */
import { toFacilitatorEvmSigner } from '@x402/evm';
import type { Context } from 'hono';
import { createWalletClient, defineChain, http, nonceManager, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** The environment variable `name`; the stack cannot start without it. */
export const env = (name: string) =>
  process.env[name] ??
  (() => {
    throw new Error(`${name} is required`);
  })();

const chainId = Number(env('CHAIN_ID'));
export const network = `eip155:${chainId}` as const;
const chain = defineChain({
  id: chainId,
  name: 'local',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [env('RPC_URL')] } },
});

/** The facilitator signer of RELAYER_KEY, with viem's nonceManager unless `withNonceManager` is false. */
export function relayerSigner(withNonceManager: boolean) {
  const account = privateKeyToAccount(env('RELAYER_KEY') as Hex, withNonceManager ? { nonceManager } : {});
  // Poll receipts as often as our facilitator does (FACILITATOR_POLL_INTERVAL_MS=20 in the bench);
  // viem's default (4 s off known local chains) would make the reference look far slower than it is.
  const client = createWalletClient({ account, chain, transport: http(env('RPC_URL')), pollingInterval: 20 }).extend(publicActions);
  return toFacilitatorEvmSigner({ ...client, address: account.address } as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]);
}

/** AMOUNT of TOKEN (the test USDC), the echo skill's price. */
export const price = { amount: env('AMOUNT'), asset: env('TOKEN'), extra: { name: 'USD Coin', version: '2' } };

/** The paid echo skill: answers its input as our skill servers do. */
export const echo = async (c: Context) => c.json({ success: true, result: await c.req.json(), timestamp: new Date().toISOString() });
