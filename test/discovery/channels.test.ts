/**
 * A skill that sells over payment channels is listed in the registry's Bazaar discovery with both
 * of its 402's offers, `exact` and `batch-settlement`, deep-equal to what the skill server asks:
 * the server says so in its /health answer and the registry's health probe keeps it. The reference
 * client (`@x402/fetch` with `@x402/evm`'s batch-settlement client) pays with the offer the listing
 * gave. Offers that do not match the listing's terms are not listed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodePaymentRequired, encodeBase64Json, type PaymentRequired } from 'skill-market/x402';
import { HEALTH_DEFAULTS, type RegistryConfig } from '../../src/config';
import type { DatabaseHandle } from '../../src/db';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { authTestConfig, jsonPost, providerKeys } from '../support/auth';
import { newCreator, type Creator } from '../support/catalogue';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { fileChannels, referenceChannelClient } from '../support/channel-server';
import { openTestDatabase } from '../support/database';
import { manualClock, memoryLogger, registryWith } from '../support/registry';
import { loopbackServeOptions, postJson } from '../support/skill-server';

let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;
let database: DatabaseHandle;
let registry: ReturnType<typeof registryWith>;
let config: RegistryConfig;
let server: SkillServer;
let creator: Creator;
let payee: Address;
let folder: string;
const clock = manualClock(new Date());
const probe = () => createHealthProber({ db: database.db, config: config.health, clock, logger: memoryLogger().logger }).probeNow();

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  folder = await mkdtemp(join(tmpdir(), 'discovery-channels-'));
  database = await openTestDatabase('embedded');
  config = authTestConfig((await providerKeys()).publicKeyPem, {
    catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
    health: { ...HEALTH_DEFAULTS, enabled: false, allowPrivateAddresses: true },
  });
  config.chain = { ...config.chain, network: chain.network, usdcAddress: chain.token.address, rpcUrl: chain.rpcUrl };
  registry = registryWith(database, config, clock);
  creator = await newCreator(registry.request);
  const payeeAccount = await chain.createAccount();
  await creator.prove(payeeAccount);
  payee = payeeAccount.address;
  const authorizer = await chain.createAccount();
  server = await serve(
    {
      tick: skill({ price: '$0.001', description: 'Counts ticks' }, (input: { i: number }) => ({ tick: input.i })),
      dear: skill({ price: '$0.05', description: 'Costs more' }, () => ({ ok: true })),
    },
    loopbackServeOptions(chain, facilitator.url, payee, { channels: fileChannels(authorizer, folder) }),
  );
  for (const [name, price] of [
    ['tick', '$0.001'],
    ['dear', '$0.05'],
  ]) {
    const res = await creator.register({ name, endpoint: `${server.url}/${name}`, price, paymentAddress: payee, network: chain.network });
    expect(res.status).toBe(201);
  }
}, 120_000);

afterAll(async () => {
  await server?.stop();
  facilitator?.stop();
  await database?.close();
  await chain?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** The PaymentRequired of an unpaid call, as the skill server answers it. */
async function asked(name: string): Promise<PaymentRequired> {
  const res = await postJson(`${server.url}/${name}`, { i: 0 });
  expect(res.status).toBe(402);
  return decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!);
}

const listed = async (path: string) => {
  const body = (await (await registry.request(path)).json()) as { items?: any[]; resources?: any[] };
  const all = body.items ?? body.resources ?? [];
  return Object.fromEntries(all.filter((r) => r.resource.startsWith(server.url)).map((r) => [r.resource.slice(server.url.length + 1), r]));
};

describe('discovery accepts of a skill server that sells over channels', () => {
  it('lists exactly what each 402 asks, the channel offer included, once the health probe has read it', async () => {
    const before = await listed(`/discovery/resources?payTo=${payee}`);
    expect(before.tick.accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['exact']);

    expect(await probe()).toMatchObject({ probed: 1, up: 1 });
    const tick = await asked('tick');
    const dear = await asked('dear');
    expect(tick.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    const listedNow = await listed(`/discovery/resources?payTo=${payee}`);
    expect(listedNow.tick.accepts).toEqual(tick.accepts);
    expect(listedNow.dear.accepts).toEqual(dear.accepts);
    expect((await listed('/discovery/search?query=ticks')).tick.accepts).toEqual(tick.accepts);
    expect((await listed('/discovery/search?query=dear')).dear.accepts).toEqual(dear.accepts);
  });

  it('is paid by @x402/fetch with the batch-settlement client from the offer the listing gave', async () => {
    await probe();
    const listing = (await listed(`/discovery/resources?payTo=${payee}`)).tick;
    const payer: TestAccount = await chain.createAccount({ usdc: 1_000_000n });
    // The 402 the client reads offers the listing's terms, not the server's own header.
    const offeredByListing = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      if (res.status !== 402) return res;
      const required = decodePaymentRequired(res.headers.get('PAYMENT-REQUIRED')!);
      const headers = new Headers(res.headers);
      headers.set('PAYMENT-REQUIRED', encodeBase64Json({ ...required, accepts: listing.accepts }));
      return new Response(await res.text(), { status: 402, headers });
    }) as typeof fetch;
    const { pay } = referenceChannelClient(chain, payer, { depositMultiplier: 10, fetch: offeredByListing });
    for (const i of [1, 2]) {
      const res = await pay(listing.resource, jsonPost({ i }));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, result: { tick: i } });
    }
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 10_000n);
  });
});
