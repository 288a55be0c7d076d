/**
 * `scheme=batch-settlement` in Bazaar discovery: of a catalogue with one skill sold over payment
 * channels (its server reports the channel offer) and one sold `exact` only, it lists just the
 * first, with a total of 1, through `/discovery/resources`, `/discovery/search` and the unmodified
 * `@x402/extensions` client; `scheme=exact` still lists both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTPFacilitatorClient } from '@x402/core/http';
import { withBazaar } from '@x402/extensions/bazaar';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import type { DiscoveryResourcesAnswer, DiscoverySearchAnswer } from 'skill-market/registry';
import { HEALTH_DEFAULTS } from '../../src/config';
import type { DatabaseHandle } from '../../src/db';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { authTestConfig, providerKeys } from '../support/auth';
import { json, newCreator } from '../support/catalogue';
import { type LocalChain, startChain, type TestAccount } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { fileChannels } from '../support/channel-server';
import { oneDatabase, openTestDatabase } from '../support/database';
import { manualClock, memoryLogger, registryWith } from '../support/registry';
import { loopbackServeOptions } from '../support/skill-server';
import { names } from './fixture';

let chain: LocalChain;
let facilitator: ReturnType<typeof startBatchFacilitator>;
let folder: string;
let channelServer: SkillServer;
let exactServer: SkillServer;
let payee: Address;
let payeeAccount: TestAccount;

beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
  facilitator = startBatchFacilitator(chain, chain.accounts.relayer);
  folder = await mkdtemp(join(tmpdir(), 'discovery-scheme-'));
  payeeAccount = await chain.createAccount();
  payee = payeeAccount.address;
  const authorizer = await chain.createAccount();
  channelServer = await serve(
    { tick: skill({ price: '$0.001', description: 'Counts ticks' }, (input: { i: number }) => ({ tick: input.i })) },
    loopbackServeOptions(chain, facilitator.url, payee, { channels: fileChannels(authorizer, folder) }),
  );
  exactServer = await serve(
    { tock: skill({ price: '$0.001', description: 'Counts tocks' }, () => ({ tock: true })) },
    loopbackServeOptions(chain, facilitator.url, payee),
  );
}, 120_000);

afterAll(async () => {
  await channelServer?.stop();
  await exactServer?.stop();
  facilitator?.stop();
  await chain?.stop();
  await rm(folder, { recursive: true, force: true });
});

for (const kind of oneDatabase) {
  describe(`scheme=batch-settlement in discovery (${kind})`, () => {
    let database: DatabaseHandle;
    let registry: ReturnType<typeof registryWith>;
    let registryUrl: string;
    const clock = manualClock(new Date());

    beforeAll(async () => {
      database = await openTestDatabase(kind);
      const config = authTestConfig((await providerKeys()).publicKeyPem, {
        catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
        health: { ...HEALTH_DEFAULTS, enabled: false, allowPrivateAddresses: true },
      });
      config.chain = { ...config.chain, network: chain.network, usdcAddress: chain.token.address, rpcUrl: chain.rpcUrl };
      registry = registryWith(database, config, clock);
      registry.app.listen({ hostname: '127.0.0.1', port: 0 });
      registryUrl = `http://127.0.0.1:${registry.app.server!.port}`;
      const creator = await newCreator(registry.request);
      await creator.prove(payeeAccount);
      for (const [name, server] of [
        ['tick', channelServer],
        ['tock', exactServer],
      ] as const) {
        clock.advance(1); // a second apart: oldest first is this order
        const res = await creator.register({
          name,
          endpoint: `${server.url}/${name}`,
          price: '$0.001',
          paymentAddress: payee,
          network: chain.network,
        });
        expect(res.status).toBe(201);
      }
      const prober = createHealthProber({ db: database.db, config: config.health, clock, logger: memoryLogger().logger });
      expect(await prober.probeNow()).toMatchObject({ probed: 2, up: 2 });
    }, 60_000);

    afterAll(async () => {
      await registry?.app.stop();
      await database?.close();
    });

    const list = async (query: string) =>
      json<DiscoveryResourcesAnswer>(await registry.request(`/discovery/resources?payTo=${payee}${query}`));
    const found = async (query: string) => json<DiscoverySearchAnswer>(await registry.request(`/discovery/search?limit=10${query}`));

    it('lists just the skill offered over channels, with a total of 1; exact lists both', async () => {
      // Asked first without a scheme: a kept total of that scope must not answer for the channel scheme.
      expect((await list('')).pagination.total).toBe(2);
      const channels = await list('&scheme=batch-settlement');
      expect(names(channels.items)).toEqual(['tick']);
      expect(channels.pagination.total).toBe(1);
      expect(channels.items[0]!.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
      const exact = await list('&scheme=exact');
      expect(names(exact.items)).toEqual(['tick', 'tock']);
      expect(exact.pagination.total).toBe(2);
      expect((await list('&scheme=batch-settlement&offset=1')).pagination).toEqual({ limit: 20, offset: 1, total: 1 });
    });

    it('finds just the skill offered over channels in search', async () => {
      expect(names((await found('')).resources).sort()).toEqual(['tick', 'tock']);
      expect(names((await found('&scheme=batch-settlement')).resources)).toEqual(['tick']);
      expect(names((await found('&scheme=exact')).resources).sort()).toEqual(['tick', 'tock']);
    });

    it('answers the @x402/extensions client’s listResources({ scheme: "batch-settlement" }) with that skill alone', async () => {
      const bazaar = withBazaar(new HTTPFacilitatorClient({ url: registryUrl })).extensions.bazaar;
      const answer = await bazaar.listResources({ scheme: 'batch-settlement', payTo: payee });
      expect(names(answer.items)).toEqual(['tick']);
      expect(answer.pagination).toMatchObject({ total: 1 });
      expect(answer.items[0]!.accepts.some((a) => a.scheme === 'batch-settlement')).toBe(true);
    });
  });
}
