/**
 * The reference x402 stack, unmodified, as a paid skill for our client: `@x402/hono` 2.27's
 * payment middleware with the `@x402/evm` exact server scheme, verifying and settling through the
 * reference facilitator (`x402Facilitator` of `@x402/core` with `@x402/evm`'s exact scheme) from
 * its own relayer account on the local chain. The facilitator runs in process, or, with
 * `facilitatorOverHttp`, behind its standard HTTP API (`/verify`, `/settle`, `/supported`) reached
 * through an answer-dropping proxy, as `HTTPFacilitatorClient` reaches a remote one.
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { type FacilitatorClient, HTTPFacilitatorClient } from '@x402/core/server';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import { type Address, publicActions } from 'viem';
import type { LocalChain } from '../../support/chain';
import { type AnswerDroppingProxy, startAnswerDroppingProxy } from './answer-dropping-proxy';

export interface ReferenceSkill {
  /** The paid route, `POST <endpoint>`. */
  endpoint: string;
  payee: Address;
  /** How many times the handler ran. */
  readonly handlerRuns: number;
  /** Between the resource server and its facilitator, with `facilitatorOverHttp`. */
  facilitatorProxy: AnswerDroppingProxy | undefined;
  stop(): Promise<void>;
}

type Verdicts = Pick<FacilitatorClient, 'verify' | 'settle'> & { getSupported(): unknown };

/** The reference facilitator's standard HTTP API. */
function facilitatorApp(facilitator: Verdicts): Hono {
  const app = new Hono();
  const body = async (request: Request) =>
    (await request.json()) as { paymentPayload: Parameters<Verdicts['verify']>[0]; paymentRequirements: Parameters<Verdicts['verify']>[1] };
  app.post('/verify', async (c) => {
    const { paymentPayload, paymentRequirements } = await body(c.req.raw);
    return c.json(await facilitator.verify(paymentPayload, paymentRequirements));
  });
  app.post('/settle', async (c) => {
    const { paymentPayload, paymentRequirements } = await body(c.req.raw);
    return c.json(await facilitator.settle(paymentPayload, paymentRequirements));
  });
  app.get('/supported', (c) => c.json(facilitator.getSupported() as Record<string, unknown>));
  return app;
}

/** Serves `POST /<name>` (a weather forecast) for `price` atomic units of the chain's token, paid to a fresh payee. */
export async function startReferenceSkill(
  chain: LocalChain,
  price: bigint,
  options: { name: string; facilitatorOverHttp?: boolean; facilitatorTimeoutMs?: number },
): Promise<ReferenceSkill> {
  const route = `/${options.name}`;
  const relayer = await chain.createAccount();
  const payee = (await chain.createAccount()).address;
  const client = chain.walletClient(relayer).extend(publicActions);
  const facilitator = new x402Facilitator();
  // viem's verifyTypedData parameter type is a union the reference's structural signer type does
  // not accept, though the call works; hence the cast.
  registerExactEvmScheme(facilitator, {
    signer: toFacilitatorEvmSigner({ ...client, address: relayer.address } as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]),
    networks: chain.network,
  });
  const stops: (() => Promise<void>)[] = [];
  let facilitatorClient: FacilitatorClient;
  let facilitatorProxy: AnswerDroppingProxy | undefined;
  if (options.facilitatorOverHttp) {
    const api = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: facilitatorApp(facilitator).fetch });
    facilitatorProxy = await startAnswerDroppingProxy(`http://127.0.0.1:${api.port}`);
    facilitatorClient = new HTTPFacilitatorClient({ url: facilitatorProxy.url, timeoutMs: options.facilitatorTimeoutMs ?? 10_000 });
    stops.push(facilitatorProxy.close, () => api.stop(true));
  } else {
    facilitatorClient = {
      verify: (payload, requirements) => facilitator.verify(payload, requirements),
      settle: (payload, requirements) => facilitator.settle(payload, requirements),
      getSupported: async () => facilitator.getSupported() as Awaited<ReturnType<FacilitatorClient['getSupported']>>,
    };
  }
  const resourceServer = new x402ResourceServer(facilitatorClient).register(chain.network, new ExactEvmScheme());
  let handlerRuns = 0;
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        [`POST ${route}`]: {
          accepts: {
            scheme: 'exact',
            network: chain.network,
            payTo: payee,
            price: {
              amount: price.toString(),
              asset: chain.token.address,
              extra: { name: chain.token.name, version: chain.token.version },
            },
          },
          description: 'Weather forecast',
        },
      },
      resourceServer,
    ),
  );
  app.post(route, async (c) => {
    handlerRuns++;
    const { city } = (await c.req.json()) as { city: string };
    return c.json({ city, forecast: 'sunny' });
  });
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  return {
    endpoint: `http://127.0.0.1:${server.port}${route}`,
    payee,
    get handlerRuns() {
      return handlerRuns;
    },
    facilitatorProxy,
    async stop() {
      await server.stop(true);
      for (const stop of stops) await stop();
    },
  };
}
