/**
 * Our facilitator's Bazaar lists what each catalogued server asks now, read from its live 402:
 * after a payment catalogued an `@x402/hono` exact server, an `@x402/hono` batch-settlement server
 * and a skill server of ours, each item equals its server's live 402 (every scheme, in the server's
 * order, its own payment window), and a proof signed from the listed terms pays the server. A price
 * change is listed at the next refresh; a server that stops answering keeps its last terms, then is
 * dropped once its reads have failed for a day.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTPFacilitatorClient } from '@x402/core/http';
import { BatchSettlementEvmScheme as BatchServerScheme } from '@x402/evm/batch-settlement/server';
import { ExactEvmScheme as ExactServerScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { referenceChannelClient } from '../support/channel-server';
import { eventually } from '../support/eventually';
import { manualClock } from '../support/facilitator';
import { asked, offering, referenceExactFetch } from '../support/reference-fetch';
import { loopbackServeOptions, startPaymentStack, type PaymentStack } from '../support/skill-server';

const PRICE = 1_000n; // $0.001
const REFRESH_MS = 60_000;
const clock = manualClock();
let stack: PaymentStack;
let folder: string;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  stack = await startPaymentStack({ payers: 1, clock, facilitator: { discoveryRefreshMs: REFRESH_MS } });
  folder = await mkdtemp(join(tmpdir(), 'facilitator-live-'));
}, 120_000);
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await stack?.close();
  await rm(folder, { recursive: true, force: true });
});

const jsonPost = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** What the facilitator's catalogue lists for `endpoint` (its accepts and lastUpdated), or undefined. */
async function listed(endpoint: string): Promise<{ accepts: Record<string, unknown>[]; lastUpdated: string } | undefined> {
  const body = (await (await stack.facilitator.get('/discovery/resources?limit=100')).json()) as {
    items: { resource: string; accepts: Record<string, unknown>[]; lastUpdated: string }[];
  };
  return body.items.find((item) => item.resource === endpoint);
}

/** Waits until the catalogue lists for `endpoint` exactly its server's live offers. */
const listsLive = async (endpoint: string) => {
  const live = (await asked(endpoint)).accepts;
  await eventually(
    () => listed(endpoint),
    (item) => Bun.deepEquals(item?.accepts, live),
    `the catalogue lists the live 402 of ${endpoint}`,
  );
  return live;
};

/**
 * An `@x402/hono` server of `POST /<name>` settling through our facilitator, declaring itself to
 * the Bazaar: its offers by `offers(payee)`, its schemes registered by `schemes`.
 */
async function honoServer(
  name: string,
  offers: (payee: Address) => unknown[],
  schemes: (server: InstanceType<typeof x402ResourceServer>, payee: Address) => void,
) {
  const payee = (await stack.chain.createAccount()).address;
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: stack.facilitatorUrl })).registerExtension(
    bazaarResourceServerExtension,
  );
  schemes(resourceServer, payee);
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        [`POST /${name}`]: {
          accepts: offers(payee) as never,
          description: `The ${name} of a harbour`,
          extensions: declareDiscoveryExtension({
            bodyType: 'json',
            input: { harbour: 'Brest' },
            inputSchema: { type: 'object', properties: { harbour: { type: 'string' } }, required: ['harbour'] },
          }),
        },
      },
      resourceServer,
    ),
  );
  app.post(`/${name}`, async (c) => c.json({ [name]: 'high at 06:12', for: await c.req.json() }));
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  let stopped = false;
  const stop = () => {
    if (!stopped) server.stop(true);
    stopped = true;
  };
  stops.push(stop);
  return { endpoint: `http://127.0.0.1:${server.port}/${name}`, payee, stop };
}

const token = () => ({ asset: stack.chain.token.address, extra: { name: stack.chain.token.name, version: stack.chain.token.version } });

describe('the facilitator’s Bazaar, from live 402s', () => {
  let exactPrice = PRICE;
  let exact: Awaited<ReturnType<typeof honoServer>>;

  it('lists an @x402/hono exact server’s live 402 after a payment, and a proof signed from the listing pays it', async () => {
    exact = await honoServer(
      'tides',
      (payTo) => [
        {
          scheme: 'exact',
          network: stack.chain.network,
          payTo,
          price: () => ({ amount: exactPrice.toString(), ...token() }),
          maxTimeoutSeconds: 300,
        },
      ],
      (server) => server.register(stack.chain.network, new ExactServerScheme()),
    );
    expect(await listed(exact.endpoint)).toBeUndefined();
    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    expect((await referenceExactFetch(stack.chain, payer)(exact.endpoint, jsonPost({ harbour: 'Brest' }))).status).toBe(200);

    const live = await listsLive(exact.endpoint);
    expect(live).toMatchObject([{ scheme: 'exact', amount: PRICE.toString(), maxTimeoutSeconds: 300 }]);
    const searched = (await (await stack.facilitator.get('/discovery/search?query=tides')).json()) as {
      resources: { resource: string; accepts: unknown[] }[];
    };
    expect(searched.resources.find((r) => r.resource === exact.endpoint)?.accepts).toEqual(live);

    const fromListing = referenceExactFetch(stack.chain, payer, offering((await listed(exact.endpoint))!.accepts));
    expect((await fromListing(exact.endpoint, jsonPost({ harbour: 'Roscoff' }))).status).toBe(200);
    expect(await stack.chain.balanceOf(exact.payee)).toBe(2n * PRICE);
  });

  it('lists an @x402/hono batch-settlement server’s every scheme in its order, and the listed channel terms pay it', async () => {
    const channels = await honoServer(
      'currents',
      (payTo) => [
        { scheme: 'batch-settlement', network: stack.chain.network, payTo, price: { amount: PRICE.toString(), ...token() } },
        { scheme: 'exact', network: stack.chain.network, payTo, price: { amount: PRICE.toString(), ...token() } },
      ],
      (server, payee) =>
        server
          .register(stack.chain.network, new BatchServerScheme(payee, { withdrawDelay: 900 }))
          .register(stack.chain.network, new ExactServerScheme()),
    );
    const first = await stack.chain.createAccount({ usdc: 1_000_000n });
    const { pay } = referenceChannelClient(stack.chain, first, { depositMultiplier: 10 });
    expect((await pay(channels.endpoint, jsonPost({ harbour: 'Brest' }))).status).toBe(200);

    const live = await listsLive(channels.endpoint);
    expect(live.map((a) => a.scheme)).toEqual(['batch-settlement', 'exact']);

    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    const terms = (await listed(channels.endpoint))!.accepts.filter((a) => a.scheme === 'batch-settlement');
    const fromListing = referenceChannelClient(stack.chain, payer, { depositMultiplier: 10, fetch: offering(terms) });
    expect((await fromListing.pay(channels.endpoint, jsonPost({ harbour: 'Roscoff' }))).status).toBe(200);
  });

  it('lists a skill server of ours with all its schemes', async () => {
    const payee = (await stack.chain.createAccount()).address;
    const server: SkillServer = await serve(
      {
        winds: skill({ price: '$0.001', description: 'Winds of a harbour' }, (input: { harbour: string }) => ({ ...input, wind: 'NW 4' })),
      },
      loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
        channels: { store: join(folder, 'winds'), claimAbove: '$100', claimWithinMs: 600_000 },
      }),
    );
    stops.push(() => server.stop());
    const endpoint = `${server.url}/winds`;
    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    expect((await referenceExactFetch(stack.chain, payer)(endpoint, jsonPost({ harbour: 'Brest' }))).status).toBe(200);

    const live = await listsLive(endpoint);
    expect(new Set(live.map((a) => a.scheme))).toEqual(new Set(['exact', 'batch-settlement']));
  });

  it('lists a new price at the next refresh', async () => {
    exactPrice = 2n * PRICE;
    expect((await asked(exact.endpoint)).accepts[0]!.amount).toBe(exactPrice.toString());
    clock.advance(REFRESH_MS / 1000);
    expect(await stack.facilitator.facilitator.refreshCatalogue()).toMatchObject({ failed: 0, dropped: 0 });
    const item = (await listed(exact.endpoint))!;
    expect(item.accepts as unknown[]).toEqual((await asked(exact.endpoint)).accepts);
    expect(item.accepts[0]!.amount).toBe('2000');
  });

  it('keeps the last terms of a server that stops answering, and drops it after a day of failed reads', async () => {
    const before = (await listed(exact.endpoint))!;
    exact.stop();
    clock.advance(REFRESH_MS / 1000);
    expect((await stack.facilitator.facilitator.refreshCatalogue()).failed).toBeGreaterThanOrEqual(1);
    expect(await listed(exact.endpoint)).toEqual(before);

    clock.advance(86_400);
    expect((await stack.facilitator.facilitator.refreshCatalogue()).dropped).toBeGreaterThanOrEqual(1);
    expect(await listed(exact.endpoint)).toBeUndefined();
  });
});
