/**
 * The reference x402 stack, unmodified, as a paid skill for our client: `@x402/hono` 2.27's
 * payment middleware with the `@x402/evm` exact server scheme, verifying and settling through the
 * reference facilitator (`x402Facilitator` of `@x402/core` with `@x402/evm`'s exact scheme) from
 * its own relayer account on the local chain. The facilitator runs in process, or, with
 * `facilitatorOverHttp`, behind its standard HTTP API (`/verify`, `/settle`, `/supported`) reached
 * through an answer-dropping proxy, as `HTTPFacilitatorClient` reaches a remote one.
 * {@link serveForecast} serves the same forecast with a resource server of the caller's (settling
 * through our facilitator, say) and lists it in the client world's registry.
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { type FacilitatorClient, HTTPFacilitatorClient } from '@x402/core/server';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { type Address, publicActions } from 'viem';
import type { Skill } from 'skill-market';
import type { LocalChain, TestAccount } from '../../support/chain';
import { serveFacilitator } from '../../support/chain/reference-facilitator';
import { type AnswerDroppingProxy, startAnswerDroppingProxy } from './answer-dropping-proxy';
import type { World } from './world';

export interface ReferenceSkill {
  /** The paid route, `POST <endpoint>`. */
  endpoint: string;
  payee: Address;
  /** The payee's account, for a creator to prove holding it before listing the skill. */
  payeeAccount: TestAccount;
  /** How many times the handler ran. */
  readonly handlerRuns: number;
  /** Between the resource server and its facilitator, with `facilitatorOverHttp`. */
  facilitatorProxy: AnswerDroppingProxy | undefined;
  stop(): Promise<void>;
}

/** `exact` terms of `price` atomic units of the chain's token paid to `payTo`, as @x402/hono's routes take them. */
export function exactTerms(chain: LocalChain, payTo: Address, price: bigint) {
  return {
    scheme: 'exact' as const,
    network: chain.network,
    payTo,
    price: {
      amount: price.toString(),
      asset: chain.token.address,
      extra: { name: chain.token.name, version: chain.token.version },
    },
  };
}

/** The forecast skill's handler: `{ city }` in, `{ city, forecast: 'sunny' }` out. */
const forecast = async (c: Context) => {
  const { city } = (await c.req.json()) as { city: string };
  return c.json({ city, forecast: 'sunny' });
};

/**
 * `POST /forecast` behind @x402/hono's payment middleware with `resourceServer`, for `price` paid
 * to `payee`, its route declaring `extensions`; `observe` sees every request first. Served on a
 * free port and registered by the world's creator ($0.01) as `forecast`.
 */
export async function serveForecast(
  world: World,
  resourceServer: x402ResourceServer,
  options: { payee: Address; price: bigint; observe: MiddlewareHandler; extensions?: Record<string, unknown> },
): Promise<{ server: ReturnType<typeof Bun.serve>; skill: Skill }> {
  const app = new Hono();
  app.use(options.observe);
  app.use(
    paymentMiddleware(
      {
        'POST /forecast': {
          accepts: exactTerms(world.chain, options.payee, options.price),
          description: 'Weather forecast',
          ...(options.extensions ? { extensions: options.extensions } : {}),
        },
      },
      resourceServer,
    ),
  );
  app.post('/forecast', forecast);
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  const res = await world.creator.register({
    name: 'forecast',
    endpoint: `http://127.0.0.1:${server.port}/forecast`,
    price: '$0.01',
    paymentAddress: options.payee,
    network: world.chain.network,
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return { server, skill: (await res.json()) as Skill };
}

/** Serves `POST /<name>` (a weather forecast) for `price` atomic units of the chain's token, paid to a fresh payee. */
export async function startReferenceSkill(
  chain: LocalChain,
  price: bigint,
  options: { name: string; facilitatorOverHttp?: boolean; facilitatorTimeoutMs?: number },
): Promise<ReferenceSkill> {
  const route = `/${options.name}`;
  const relayer = await chain.createAccount();
  const payeeAccount = await chain.createAccount();
  const payee = payeeAccount.address;
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
    const api = serveFacilitator(facilitator);
    facilitatorProxy = await startAnswerDroppingProxy(api.url);
    facilitatorClient = new HTTPFacilitatorClient({ url: facilitatorProxy.url, timeoutMs: options.facilitatorTimeoutMs ?? 10_000 });
    stops.push(facilitatorProxy.close, api.stop);
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
          accepts: exactTerms(chain, payee, price),
          description: 'Weather forecast',
        },
      },
      resourceServer,
    ),
  );
  app.post(route, (c) => {
    handlerRuns++;
    return forecast(c);
  });
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  return {
    endpoint: `http://127.0.0.1:${server.port}${route}`,
    payee,
    payeeAccount,
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
