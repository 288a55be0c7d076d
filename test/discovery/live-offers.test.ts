/**
 * Listings of other SDKs' servers equal their live 402: `@x402/hono` servers report no offers in a
 * /health, so the registry's health probe asks each skill's 402 and discovery lists what it asks —
 * an `exact` server's own payment window (300 s, not the default 60 s), a `batch-settlement` server's
 * channel offer beside its `exact` one, in the server's order — and a proof signed from the listing
 * pays the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme as ExactServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/hono';
import { Hono } from 'hono';
import { HEALTH_DEFAULTS, type RegistryConfig } from '../../src/config';
import type { DatabaseHandle } from '../../src/db';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { authTestConfig, jsonPost, providerKeys } from '../support/auth';
import { newCreator, type Creator } from '../support/catalogue';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { type BatchServer, startBatchServer } from '../support/chain/batch-server';
import { referenceChannelClient } from '../support/channel-server';
import { openTestDatabase } from '../support/database';
import { asked, offering, referenceExactFetch } from '../support/reference-fetch';
import { manualClock, memoryLogger, registryWith } from '../support/registry';

const PRICE = 1_000n; // $0.001
let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;
let database: DatabaseHandle;
let registry: ReturnType<typeof registryWith>;
let config: RegistryConfig;
let creator: Creator;
let channels: BatchServer;
let exact: { url: string; payee: TestAccount; stop(): void };
const clock = manualClock(new Date());
const probe = () => createHealthProber({ db: database.db, config: config.health, clock, logger: memoryLogger().logger }).probeNow();

/** An `@x402/hono` server selling `POST /forecast` by `exact` with a 300 s payment window. */
async function startExactServer(): Promise<typeof exact> {
  const payee = await chain.createAccount();
  const resourceServer = new x402ResourceServer(facilitator.client).register(chain.network, new ExactServerScheme());
  const price = { amount: PRICE.toString(), asset: chain.token.address, extra: { name: chain.token.name, version: chain.token.version } };
  const app = new Hono();
  app.use(
    paymentMiddleware(
      { 'POST /forecast': { accepts: [{ scheme: 'exact', network: chain.network, payTo: payee.address, price, maxTimeoutSeconds: 300 }] } },
      resourceServer,
    ),
  );
  app.post('/forecast', async (c) => c.json({ forecast: 'sunny', for: await c.req.json() }));
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  return { url: `http://127.0.0.1:${server.port}`, payee, stop: () => server.stop(true) };
}

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  database = await openTestDatabase('embedded');
  config = authTestConfig((await providerKeys()).publicKeyPem, {
    catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
    health: { ...HEALTH_DEFAULTS, enabled: false, allowPrivateAddresses: true },
  });
  config.chain = { ...config.chain, network: chain.network, usdcAddress: chain.token.address, rpcUrl: chain.rpcUrl };
  registry = registryWith(database, config, clock);
  creator = await newCreator(registry.request);
  channels = await startBatchServer(chain, { name: 'tock', price: PRICE, exact: true });
  exact = await startExactServer();
  await creator.prove(channels.payeeAccount);
  await creator.prove(exact.payee);
  for (const [name, endpoint, payee] of [
    ['tock', channels.endpoint, channels.payee],
    ['forecast', `${exact.url}/forecast`, exact.payee.address],
  ] as const) {
    const res = await creator.register({ name, endpoint, price: '$0.001', paymentAddress: payee, network: chain.network });
    expect(res.status).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await channels?.stop();
  exact?.stop();
  facilitator?.stop();
  await database?.close();
  await chain?.stop();
});

const listedAccepts = async (endpoint: string) => {
  const body = (await (await registry.request(`/discovery/resources?limit=100`)).json()) as {
    items: { resource: string; accepts: unknown[] }[];
  };
  return body.items.find((r) => r.resource === endpoint)?.accepts;
};

describe('listings of other SDKs’ servers', () => {
  it('equal each live 402 once the health probe has asked it, every scheme and payment window included', async () => {
    const [tockAsked, forecastAsked] = [await asked(channels.endpoint), await asked(`${exact.url}/forecast`)];
    expect(forecastAsked.accepts[0]!.maxTimeoutSeconds).toBe(300);
    expect(tockAsked.accepts.map((a) => a.scheme)).toEqual(['batch-settlement', 'exact']);
    // Before any probe: the listing's own exact terms, the default window.
    expect(((await listedAccepts(`${exact.url}/forecast`)) as { maxTimeoutSeconds: number }[])[0]!.maxTimeoutSeconds).toBe(60);

    expect(await probe()).toMatchObject({ probed: 2, up: 2 });
    expect(await listedAccepts(channels.endpoint)).toEqual(tockAsked.accepts);
    expect(await listedAccepts(`${exact.url}/forecast`)).toEqual(forecastAsked.accepts);
  });

  it('give a proof the server accepts: @x402/fetch pays the exact server, the batch-settlement client the channel server', async () => {
    await probe();
    const payer = await chain.createAccount({ usdc: 1_000_000n });
    const pay = referenceExactFetch(chain, payer, offering((await listedAccepts(`${exact.url}/forecast`))!));
    const res = await pay(`${exact.url}/forecast`, jsonPost({ city: 'Lyon' }));
    expect(res.status).toBe(200);
    expect(await chain.balanceOf(exact.payee.address)).toBe(PRICE);

    const channelPayer = await chain.createAccount({ usdc: 1_000_000n });
    const listed = (await listedAccepts(channels.endpoint))!.filter((a) => (a as { scheme: string }).scheme === 'batch-settlement');
    const { pay: payByChannel } = referenceChannelClient(chain, channelPayer, { depositMultiplier: 10, fetch: offering(listed) });
    const paid = await payByChannel(channels.endpoint, jsonPost({ i: 1 }));
    expect(paid.status).toBe(200);
    expect(channels.handled).toBe(1);
  });
});
