/**
 * The x402 reference stack as a benchmark peer, in its own process: the reference facilitator
 * (x402Facilitator + the exact EVM scheme from @x402/core and @x402/evm) served over HTTP, and a
 * paywalled route on @x402/hono that settles through it. The relayer uses viem's nonceManager,
 * the configuration a careful operator runs (as shipped, concurrent settles collide); set
 * REFERENCE_NONCE_MANAGER=off to measure it as shipped. Receipts are polled every 20 ms, like ours.
 *   env: RPC_URL, CHAIN_ID, TOKEN, RELAYER_KEY, PAY_TO, AMOUNT   → prints {"facilitatorUrl","resourceUrl"}
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import { createWalletClient, defineChain, http, nonceManager, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const env = (name: string) =>
  process.env[name] ??
  (() => {
    throw new Error(`${name} is required`);
  })();
const chainId = Number(env('CHAIN_ID'));
const network = `eip155:${chainId}` as const;
const chain = defineChain({
  id: chainId,
  name: 'local',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [env('RPC_URL')] } },
});
const account = privateKeyToAccount(env('RELAYER_KEY') as Hex, process.env.REFERENCE_NONCE_MANAGER === 'off' ? {} : { nonceManager });
// Poll receipts as often as our facilitator does (FACILITATOR_POLL_INTERVAL_MS=20 in the bench);
// viem's default (4 s off known local chains) would make the reference look far slower than it is.
const client = createWalletClient({ account, chain, transport: http(env('RPC_URL')), pollingInterval: 20 }).extend(publicActions);

const facilitator = new x402Facilitator();
registerExactEvmScheme(facilitator, {
  signer: toFacilitatorEvmSigner({ ...client, address: account.address } as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]),
  networks: network,
});
const facilitatorApp = new Hono()
  .post('/verify', async (c) => {
    const body = await c.req.json();
    return c.json(await facilitator.verify(body.paymentPayload, body.paymentRequirements));
  })
  .post('/settle', async (c) => {
    const body = await c.req.json();
    return c.json(await facilitator.settle(body.paymentPayload, body.paymentRequirements));
  })
  .get('/supported', (c) => c.json(facilitator.getSupported()));
const facilitatorServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: facilitatorApp.fetch });
const facilitatorUrl = `http://127.0.0.1:${facilitatorServer.port}`;

const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(network, new ExactEvmScheme());
const app = new Hono();
app.use(
  paymentMiddleware(
    {
      'POST /echo': {
        accepts: {
          scheme: 'exact',
          network,
          payTo: env('PAY_TO'),
          price: { amount: env('AMOUNT'), asset: env('TOKEN'), extra: { name: 'USD Coin', version: '2' } },
        },
        description: 'Echo',
      },
    },
    resourceServer,
  ),
);
app.post('/echo', async (c) => c.json({ success: true, result: await c.req.json(), timestamp: new Date().toISOString() }));
const resource = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
console.log(JSON.stringify({ facilitatorUrl, resourceUrl: `http://127.0.0.1:${resource.port}/echo` }));
process.on('SIGTERM', () => process.exit(0));
