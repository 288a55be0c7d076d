/**
 * The x402 reference `batch-settlement` stack as a benchmark peer, in its own process: the
 * reference facilitator (x402Facilitator + @x402/evm's batch-settlement facilitator scheme) over
 * HTTP, and a paid route on @x402/hono with @x402/evm's batch-settlement server scheme (its own
 * receiver-authorizer key, in-memory channel storage) settling through it. `POST /claim-and-settle`
 * runs its channel manager's claimAndSettle (one claim of every channel's vouchers, one settle)
 * and answers the transactions, so the bench can check the claimed total and weigh the gas.
 *   env: RPC_URL, CHAIN_ID, TOKEN, RELAYER_KEY, AUTHORIZER_KEY, PAY_TO, AMOUNT
 *   → prints {"facilitatorUrl","resourceUrl","controlUrl"}
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as FacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { BatchSettlementEvmScheme as ServerScheme } from '@x402/evm/batch-settlement/server';
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
const account = privateKeyToAccount(env('RELAYER_KEY') as Hex, { nonceManager });
// Receipts polled every 20 ms, as our facilitator does in the bench.
const client = createWalletClient({ account, chain, transport: http(env('RPC_URL')), pollingInterval: 20 }).extend(publicActions);
const signer = toFacilitatorEvmSigner({ ...client, address: account.address } as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]);

const facilitator = new x402Facilitator().register(network, new FacilitatorScheme(signer));
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
const facilitatorClient = new HTTPFacilitatorClient({ url: facilitatorUrl });

const authorizer = privateKeyToAccount(env('AUTHORIZER_KEY') as Hex);
const payTo = env('PAY_TO') as `0x${string}`;
const scheme = new ServerScheme(payTo, { receiverAuthorizerSigner: authorizer, withdrawDelay: 900 });
const resourceServer = new x402ResourceServer(facilitatorClient).register(network, scheme);
const manager = scheme.createChannelManager(facilitatorClient, network, env('TOKEN') as `0x${string}`);
const price = { amount: env('AMOUNT'), asset: env('TOKEN'), extra: { name: 'USD Coin', version: '2' } };
const app = new Hono();
app.post('/claim-and-settle', async (c) => c.json(await manager.claimAndSettle()));
app.use(
  paymentMiddleware(
    { 'POST /echo': { accepts: { scheme: 'batch-settlement', network, payTo, price }, description: 'Echo' } },
    resourceServer,
  ),
);
app.post('/echo', async (c) => c.json({ success: true, result: await c.req.json(), timestamp: new Date().toISOString() }));
const resource = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
const base = `http://127.0.0.1:${resource.port}`;
console.log(JSON.stringify({ facilitatorUrl, resourceUrl: `${base}/echo`, controlUrl: `${base}/claim-and-settle` }));
process.on('SIGTERM', () => process.exit(0));
