/**
 * A catalogue for the Bazaar discovery tests: three creators, skills on Base, Base Sepolia and a
 * network whose token the registry does not know, one skill server that answers its health probe
 * and one that fails it (probed once at the start), on a registry with the read cache on.
 */
import { afterAll, beforeAll } from 'bun:test';
import { HEALTH_DEFAULTS } from '../../src/config';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { bearer, jsonPost, newWallet } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import type { DatabaseKind } from '../../src/db';
import { memoryLogger, registryFixture } from '../support/registry';

/** A local HTTP server answering every request with `status`. */
function statusServer(status: number) {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('{}', { status }) });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/** Group names of `translator`: the Bazaar keeps printable ASCII of at most 32 characters, five at most. */
export const TRANSLATOR_GROUPS = ['nlp', 'text', 'tools', 'words', 'extra', 'more', 'Übersetzung', 'a-group-name-longer-than-32-chars'];
export const VALID_TAGS = new Set(['nlp', 'text', 'tools', 'words', 'extra', 'more']);

export function discoveryCatalogue(kind: DatabaseKind) {
  const fx = registryFixture(kind, {
    catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
    health: { ...HEALTH_DEFAULTS, enabled: false, allowPrivateAddresses: true },
  });
  const up = statusServer(200);
  const down = statusServer(500);
  // Each creator's payout wallet, which they prove holding before listing skills paid to it.
  const payees = { alice: newWallet(), bob: newWallet(), carol: newWallet() };
  const cat = {
    fx,
    up,
    down,
    alicePay: payees.alice.address,
    bobPay: payees.bob.address,
    carolPay: payees.carol.address,
    /** Skill slugs by name. */
    slugs: {} as Record<string, string>,
    alice: undefined as unknown as Creator,
    bob: undefined as unknown as Creator,
    carol: undefined as unknown as Creator,
    /** One health round, as the background prober runs it. */
    probe: () =>
      createHealthProber({ db: fx.database.db, config: fx.config.health, clock: fx.clock, logger: memoryLogger().logger }).probeNow(),
    /** Registers a skill one second after the previous one (so the oldest-first order is known). */
    async register(creator: Creator, body: Record<string, unknown>): Promise<string> {
      fx.clock.advance(1);
      const res = await creator.register({ endpoint: up.url, ...body });
      if (res.status !== 201) throw new Error(`register ${String(body.name)}: ${res.status} ${await res.text()}`);
      const slug = (await json<{ slug: string }>(res)).slug;
      cat.slugs[String(body.name)] = slug;
      return slug;
    },
    async patch(creator: Creator, name: string, body: Record<string, unknown>): Promise<void> {
      const res = await fx.request(`/skills/${cat.slugs[name]}`, {
        method: 'PATCH',
        headers: { ...bearer(creator.key), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`patch ${name}: ${res.status} ${await res.text()}`);
    },
    async profile(creator: Creator, body: Record<string, unknown>): Promise<void> {
      const res = await fx.request('/creators/me', { ...jsonPost(body, bearer(creator.token)), method: 'PATCH' });
      if (res.status !== 200) throw new Error(`profile: ${res.status} ${await res.text()}`);
    },
  };

  beforeAll(async () => {
    cat.alice = await newCreator(fx.request);
    cat.bob = await newCreator(fx.request);
    cat.carol = await newCreator(fx.request);
    await Promise.all([cat.alice.prove(payees.alice), cat.bob.prove(payees.bob), cat.carol.prove(payees.carol)]);
    await cat.profile(cat.alice, { name: 'Alice Tools', avatar: 'https://cdn.example.com/alice.png' });
    await cat.profile(cat.carol, { name: 'Zoë', avatar: 'http://cdn.example.com/zoe.png' });
    await cat.alice.group('weather');
    for (const name of ['text', ...TRANSLATOR_GROUPS.filter((g) => g !== 'text')]) await cat.bob.group(name);
    await cat.carol.group('misc');
    await cat.register(cat.alice, {
      name: 'weather-now',
      description: 'Current weather conditions for a city',
      price: '$0.002',
      paymentAddress: cat.alicePay,
      groups: ['weather'],
      inputSchema: { type: 'object', properties: { city: { type: 'string', minLength: 2 } }, required: ['city'] },
    });
    await cat.register(cat.alice, {
      name: 'forecast-daily',
      description: 'Tomorrow’s weather forecast',
      price: '$0.01',
      paymentAddress: cat.alicePay,
      network: 'eip155:84532',
      groups: ['weather'],
    });
    await cat.register(cat.bob, {
      name: 'translator',
      description: 'Translates text between languages',
      price: '$0.05',
      paymentAddress: cat.bobPay,
      groups: TRANSLATOR_GROUPS,
    });
    await cat.register(cat.bob, { name: 'summarize', description: 'Summaries of long text', paymentAddress: cat.bobPay, groups: ['text'] });
    await cat.register(cat.bob, { name: 'local-echo', description: 'Echoes on a local chain', network: 'eip155:31337', groups: ['text'] });
    await cat.register(cat.bob, {
      name: 'flaky',
      description: 'Often down',
      endpoint: down.url,
      paymentAddress: cat.bobPay,
      groups: ['text'],
    });
    await cat.register(cat.carol, { name: 'zoe-tool', description: 'Miscellaneous', paymentAddress: cat.carolPay, groups: ['misc'] });
    const round = await cat.probe();
    if (round.up !== 1 || round.down !== 1) throw new Error(`probe round: ${JSON.stringify(round)}`);
  });
  afterAll(() => {
    up.stop();
    down.stop();
  });
  return cat;
}

export type DiscoveryCatalogue = ReturnType<typeof discoveryCatalogue>;

/** The names of the skills a discovery answer lists, in order (the last path segment of each resource). */
export const names = (resources: { resource: string }[]) => resources.map((r) => r.resource.slice(r.resource.lastIndexOf('/') + 1));
