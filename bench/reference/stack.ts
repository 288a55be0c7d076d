/**
 * The x402 reference stack as a benchmark peer, in its own process: the reference facilitator
 * (x402Facilitator + the exact EVM scheme from @x402/core and @x402/evm) served over HTTP, and a
 * paywalled route on @x402/hono that settles through it. The relayer uses viem's nonceManager,
 * the configuration a careful operator runs (as shipped, concurrent settles collide); set
 * REFERENCE_NONCE_MANAGER=off to measure it as shipped. Receipts are polled every 20 ms, like ours.
 *   env: RPC_URL, CHAIN_ID, TOKEN, RELAYER_KEY, PAY_TO, AMOUNT   → prints {"facilitatorUrl","resourceUrl"}
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import { serveFacilitator } from '../../test/support/chain/reference-facilitator';
import { echo, env, network, price, relayerSigner } from './peer';

const facilitator = new x402Facilitator();
registerExactEvmScheme(facilitator, { signer: relayerSigner(process.env.REFERENCE_NONCE_MANAGER !== 'off'), networks: network });
const { url: facilitatorUrl, client: facilitatorClient } = serveFacilitator(facilitator);

const resourceServer = new x402ResourceServer(facilitatorClient).register(network, new ExactEvmScheme());
const app = new Hono();
app.use(
  paymentMiddleware(
    { 'POST /echo': { accepts: { scheme: 'exact', network, payTo: env('PAY_TO'), price }, description: 'Echo' } },
    resourceServer,
  ),
);
app.post('/echo', echo);
const resource = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
console.log(JSON.stringify({ facilitatorUrl, resourceUrl: `http://127.0.0.1:${resource.port}/echo` }));
process.on('SIGTERM', () => process.exit(0));
