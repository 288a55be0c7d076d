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
import { BatchSettlementEvmScheme as FacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { BatchSettlementEvmScheme as ServerScheme } from '@x402/evm/batch-settlement/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { serveFacilitator } from '../../test/support/chain/reference-facilitator';
import { echo, env, network, price, relayerSigner } from './peer';

const facilitator = new x402Facilitator().register(network, new FacilitatorScheme(relayerSigner(true)));
const { url: facilitatorUrl, client: facilitatorClient } = serveFacilitator(facilitator);

const authorizer = privateKeyToAccount(env('AUTHORIZER_KEY') as Hex);
const payTo = env('PAY_TO') as `0x${string}`;
const scheme = new ServerScheme(payTo, { receiverAuthorizerSigner: authorizer, withdrawDelay: 900 });
const resourceServer = new x402ResourceServer(facilitatorClient).register(network, scheme);
const manager = scheme.createChannelManager(facilitatorClient, network, env('TOKEN') as `0x${string}`);
const app = new Hono();
app.post('/claim-and-settle', async (c) => c.json(await manager.claimAndSettle()));
app.use(
  paymentMiddleware(
    { 'POST /echo': { accepts: { scheme: 'batch-settlement', network, payTo, price }, description: 'Echo' } },
    resourceServer,
  ),
);
app.post('/echo', echo);
const resource = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
const base = `http://127.0.0.1:${resource.port}`;
console.log(JSON.stringify({ facilitatorUrl, resourceUrl: `${base}/echo`, controlUrl: `${base}/claim-and-settle` }));
process.on('SIGTERM', () => process.exit(0));
