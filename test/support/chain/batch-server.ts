/**
 * A reference `batch-settlement` skill server on the local chain: @x402/hono with @x402/evm's
 * server scheme, settling through the reference facilitator (batch-facilitator.ts), one paid
 * `POST /<name>` that echoes its input and counts calls. It offers `batch-settlement` first and,
 * with `exact`, `exact` beside it; CORS lets a web page call it and read the x402 headers.
 *
 * @example
 * const server = await startBatchServer(chain, { name: 'echo', price: 1_000n, exact: true });
 * await fetch(`${server.url}/echo`, { method: 'POST', body: '{}' }); // 402 with both offers
 */
import { BatchSettlementEvmScheme as ServerScheme } from '@x402/evm/batch-settlement/server';
import { ExactEvmScheme as ExactServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import type { Address } from 'viem';
import type { LocalChain, TestAccount } from './anvil';
import { startBatchFacilitator } from './batch-facilitator';

export interface BatchServer {
  url: string;
  /** The skill's URL, `<url>/<name>`. */
  endpoint: string;
  payee: Address;
  /** The payee's account, for a creator to prove holding it before listing the skill. */
  payeeAccount: TestAccount;
  /** Paid calls the handler ran. */
  handled: number;
  stop(): Promise<void>;
}

export async function startBatchServer(chain: LocalChain, options: { name: string; price: bigint; exact?: boolean }): Promise<BatchServer> {
  const facilitator = startBatchFacilitator(chain, await chain.createAccount());
  const payeeAccount = await chain.createAccount();
  const payee = payeeAccount.address;
  const authorizer = await chain.createAccount();
  const resourceServer = new x402ResourceServer(facilitator.client).register(
    chain.network,
    new ServerScheme(payee, { receiverAuthorizerSigner: authorizer, withdrawDelay: 900 }),
  );
  if (options.exact) resourceServer.register(chain.network, new ExactServerScheme());
  const { address, name, version } = chain.token;
  const price = { amount: options.price.toString(), asset: address, extra: { name, version } };
  const state = { handled: 0 };
  const app = new Hono();
  app.use(
    cors({
      origin: '*',
      allowHeaders: ['Content-Type', 'PAYMENT-SIGNATURE', 'X-PAYMENT'],
      exposeHeaders: ['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-PAYMENT-RESPONSE'],
    }),
  );
  app.use(
    paymentMiddleware(
      {
        [`POST /${options.name}`]: {
          accepts: [
            { scheme: 'batch-settlement', network: chain.network, payTo: payee, price },
            ...(options.exact ? [{ scheme: 'exact', network: chain.network, payTo: payee, price }] : []),
          ],
          description: options.name,
        },
      },
      resourceServer,
    ),
  );
  app.post(`/${options.name}`, async (c) => {
    state.handled++;
    return c.json({ echo: await c.req.json(), n: state.handled });
  });
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    endpoint: `${url}/${options.name}`,
    payee,
    payeeAccount,
    get handled() {
      return state.handled;
    },
    async stop() {
      await server.stop(true);
      await facilitator.stop();
    },
  };
}
