/**
 * Payment-channel fixtures around OUR facilitator: served over HTTP on a random port, a reference
 * `batch-settlement` resource server (@x402/hono with @x402/evm's server scheme, delegating the
 * receiver authorizer to the facilitator) and the reference client (@x402/fetch with @x402/evm's
 * client scheme).
 */
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as ClientScheme } from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme as ServerScheme } from '@x402/evm/batch-settlement/server';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import type { Address } from 'viem';
import type { DatabaseKind } from '../../../src/db';
import type { LocalChain, TestAccount } from '../../support/chain';
import { startFacilitatorFixture, type FacilitatorFixture } from '../../support/facilitator';

export const PRICE = 1_000n; // per request, atomic USDC

/** Our facilitator on a fresh `kind` database, listening on a random port. */
export async function servedFacilitator(chain: LocalChain, kind: DatabaseKind, config: Parameters<typeof startFacilitatorFixture>[2] = {}) {
  const fixture = await startFacilitatorFixture(chain, kind, config);
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => fixture.facilitator.app.handle(request) });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    fixture,
    url,
    client: new HTTPFacilitatorClient({ url }),
    /** A client sending `Authorization: Bearer <key>` to /verify and /settle (a key bound to a receiver). */
    keyed(key: string) {
      const authorization = { authorization: `Bearer ${key}` };
      return new HTTPFacilitatorClient({
        url,
        createAuthHeaders: async () => ({ verify: authorization, settle: authorization, supported: {} }),
      });
    },
    async close() {
      server.stop(true);
      await fixture.close();
    },
  };
}

export type ServedFacilitator = Awaited<ReturnType<typeof servedFacilitator>>;

/**
 * A reference batch-settlement server paying `payee` PRICE per `GET /data` (or another route), settling through
 * `facilitator`; the channel manager claims, settles and refunds through it too.
 */
export function referenceServer(
  chain: LocalChain,
  facilitator: HTTPFacilitatorClient,
  payee: Address,
  { method = 'GET', path = '/data' }: { method?: 'GET' | 'POST'; path?: string } = {},
) {
  const scheme = new ServerScheme(payee, { withdrawDelay: 900 });
  const resourceServer = new x402ResourceServer(facilitator).register(chain.network, scheme);
  const price = { amount: `${PRICE}`, asset: chain.token.address, extra: { name: chain.token.name, version: chain.token.version } };
  const state = { handled: 0 };
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        [`${method} ${path}`]: {
          accepts: { scheme: 'batch-settlement', network: chain.network, payTo: payee, price },
          description: 'Data',
        },
      },
      resourceServer,
    ),
  );
  app.on(method, path, (c) => {
    state.handled++;
    return c.json({ data: state.handled });
  });
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  return {
    url: `http://127.0.0.1:${server.port}${path}`,
    state,
    manager: scheme.createChannelManager(facilitator, chain.network, chain.token.address),
    stop: () => server.stop(true),
  };
}

/** The reference client paying from `payer`, depositing ten requests' worth at a time. */
export function referenceClient(chain: LocalChain, payer: TestAccount) {
  const scheme = new ClientScheme(toClientEvmSigner(payer, chain.publicClient as unknown as Parameters<typeof toClientEvmSigner>[1]), {
    depositPolicy: { depositMultiplier: 10 },
  });
  const client = new x402Client().register(chain.network, scheme);
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
  const pay = wrapFetchWithPayment(fetch, client);
  return {
    scheme,
    /** A paid request: its status, body and decoded PAYMENT-RESPONSE. */
    async get(url: string) {
      const res = await pay(url);
      const header = res.headers.get('PAYMENT-RESPONSE');
      return { status: res.status, body: await res.text(), receipt: header ? decodePaymentResponseHeader(header) : undefined };
    },
  };
}

export type { FacilitatorFixture };
