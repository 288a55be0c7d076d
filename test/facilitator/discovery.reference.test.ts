/**
 * Our facilitator's Bazaar: a resource paid through it, declared by the reference server
 * (`@x402/hono` with the `bazaar` extension) and paid by the reference client (`@x402/fetch`),
 * is found by the unmodified Bazaar client of `@x402/extensions` in the facilitator's own
 * discovery API, though no registry lists it; `/supported` names the extension.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension, validateDiscoveryExtension, withBazaar } from '@x402/extensions/bazaar';
import { wrapFetchWithPayment } from '@x402/fetch';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import type { Address } from 'viem';
import { PRICE } from '../support/facilitator';
import { startPaymentStack, type PaymentStack } from '../support/skill-server';

let stack: PaymentStack;
let server: ReturnType<typeof Bun.serve>;
let payee: Address;
let endpoint: string;

beforeAll(async () => {
  stack = await startPaymentStack();
  payee = (await stack.chain.createAccount()).address;
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: stack.facilitatorUrl }))
    .register(stack.chain.network, new ExactEvmScheme())
    .registerExtension(bazaarResourceServerExtension);
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        'POST /tide-forecast': {
          accepts: {
            scheme: 'exact',
            network: stack.chain.network,
            payTo: payee,
            price: {
              amount: PRICE.toString(),
              asset: stack.chain.token.address,
              extra: { name: stack.chain.token.name, version: stack.chain.token.version },
            },
          },
          description: 'Tide forecast for a harbour',
          extensions: declareDiscoveryExtension({
            bodyType: 'json',
            input: { harbour: 'Brest' },
            inputSchema: { type: 'object', properties: { harbour: { type: 'string' } }, required: ['harbour'] },
            output: { example: { harbour: 'Brest', high: '06:12' } },
          }),
        },
      },
      resourceServer,
    ),
  );
  app.post('/tide-forecast', async (c) => {
    const { harbour } = (await c.req.json()) as { harbour: string };
    return c.json({ harbour, high: '06:12' });
  });
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  endpoint = `http://127.0.0.1:${server.port}/tide-forecast`;
}, 60_000);

afterAll(async () => {
  await server?.stop(true);
  await stack?.close();
});

describe('the facilitator’s Bazaar, read by @x402/extensions', () => {
  const bazaar = () => withBazaar(new HTTPFacilitatorClient({ url: stack.facilitatorUrl })).extensions.bazaar;

  it('names the bazaar extension in /supported', async () => {
    const supported = await new HTTPFacilitatorClient({ url: stack.facilitatorUrl }).getSupported();
    expect(supported.extensions).toContain('bazaar');
  });

  it('lists nothing before a payment, then the resource a payment through it declared, with its terms', async () => {
    expect((await bazaar().listResources()).items.filter((i) => i.resource === endpoint)).toEqual([]);

    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: payer });
    client.setSpendControls({ allowedAssets: [{ network: stack.chain.network, asset: stack.chain.token.address }] });
    const paid = await wrapFetchWithPayment(fetch, client)(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ harbour: 'Brest' }),
    });
    expect(paid.status).toBe(200);

    const listed = await bazaar().listResources({ type: 'http' });
    const found = listed.items.filter((i) => i.resource === endpoint);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      type: 'http',
      x402Version: 2,
      description: 'Tide forecast for a harbour',
      accepts: [
        { scheme: 'exact', network: stack.chain.network, amount: PRICE.toString(), payTo: payee, asset: stack.chain.token.address },
      ],
    });
    expect(listed.pagination).toMatchObject({ limit: 20, offset: 0, total: listed.items.length });
    const declaration = found[0]!.extensions!.bazaar as Parameters<typeof validateDiscoveryExtension>[0];
    expect(validateDiscoveryExtension(declaration).valid).toBe(true);
    expect(declaration.info.input).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json', body: { harbour: 'Brest' } });

    // A second payment updates the entry; it is not listed twice.
    const again = await wrapFetchWithPayment(fetch, client)(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ harbour: 'Roscoff' }),
    });
    expect(again.status).toBe(200);
    expect((await bazaar().listResources()).items.filter((i) => i.resource === endpoint)).toHaveLength(1);
  });

  it('finds it by search and by its payee, and not by words it lacks or another payee', async () => {
    const searched = await bazaar().search({ query: 'tide harbour' });
    expect(searched.resources.map((r) => r.resource)).toContain(endpoint);
    expect((await bazaar().search({ query: 'volcano' })).resources).toEqual([]);
    expect((await bazaar().listResources({ payTo: payee })).items.map((i) => i.resource)).toEqual([endpoint]);
    expect((await bazaar().listResources({ payTo: `0x${'9'.repeat(40)}` })).items).toEqual([]);
    expect((await bazaar().listResources({ type: 'mcp' })).items).toEqual([]);
  });
});
