/** `GET /discovery/resources`: the Bazaar listing of the skills on offer, its filters, pages and refusals. */
import { describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { BASE_MAINNET, BASE_SEPOLIA } from 'skill-market/x402';
import type { DiscoveryResource, DiscoveryResourcesAnswer } from 'skill-market/registry';
import { skills } from '../../src/db/schema';
import { json } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { discoveryCatalogue, names, TRANSLATOR_GROUPS, VALID_TAGS } from './fixture';

/** The skills on offer in the fixture, oldest first: active, server not down, token known. */
const OFFERED = ['weather-now', 'forecast-daily', 'translator', 'summarize', 'zoe-tool'];

for (const kind of oneDatabase) {
  describe(`GET /discovery/resources on ${kind}`, () => {
    const cat = discoveryCatalogue(kind);
    const list = async (query = '') => {
      const res = await cat.fx.request(`/discovery/resources${query}`);
      expect(res.status).toBe(200);
      return json<DiscoveryResourcesAnswer>(res);
    };
    const item = async (name: string) => (await list('?limit=100')).items.find((i) => names([i])[0] === name);

    it('lists the active skills of servers not down, on networks whose token it knows, oldest first, with the total', async () => {
      const answer = await list();
      expect(answer.x402Version).toBe(2);
      expect(names(answer.items)).toEqual(OFFERED);
      expect(answer.pagination).toEqual({ limit: 20, offset: 0, total: OFFERED.length });
      // Absent for a reason: the failing server's skill is listed as down, the local chain's as active.
      expect((await json<{ name: string }[]>(await cat.fx.request('/skills?status=down'))).map((s) => s.name)).toEqual(['flaky']);
      expect((await json<{ isActive: boolean }>(await cat.fx.request(`/skills/${cat.slugs['local-echo']}`))).isActive).toBe(true);
    });

    it('gives each resource the terms its server asks: the network’s USDC with its EIP-712 domain, the price, payTo, 60 s', async () => {
      expect((await item('weather-now'))!.accepts).toEqual([
        {
          scheme: 'exact',
          network: BASE_MAINNET.network,
          amount: '2000',
          asset: BASE_MAINNET.usdc.address,
          payTo: cat.alicePay,
          maxTimeoutSeconds: 60,
          extra: { name: 'USD Coin', version: '2' },
        },
      ]);
      expect((await item('forecast-daily'))!.accepts).toEqual([
        {
          scheme: 'exact',
          network: BASE_SEPOLIA.network,
          amount: '10000',
          asset: BASE_SEPOLIA.usdc.address,
          payTo: cat.alicePay,
          maxTimeoutSeconds: 60,
          extra: { name: 'USDC', version: '2' },
        },
      ]);
    });

    it('describes the resource: its call URL, description, JSON, when it last changed', async () => {
      const weather = (await item('weather-now'))!;
      const listing = await json<{ endpoint: string; updatedAt: string }>(await cat.fx.request(`/skills/${cat.slugs['weather-now']}`));
      expect(weather).toMatchObject({
        resource: listing.endpoint,
        type: 'http',
        x402Version: 2,
        description: 'Current weather conditions for a city',
        mimeType: 'application/json',
        lastUpdated: listing.updatedAt,
      });
      expect(weather.resource).toBe(`${cat.up.url}/weather-now`);
    });

    it('names the service by its creator (else the skill), tags it by its groups and shows an https avatar, each as the Bazaar allows', async () => {
      const weather = (await item('weather-now')) as DiscoveryResource;
      expect(weather).toMatchObject({ serviceName: 'Alice Tools', tags: ['weather'], iconUrl: 'https://cdn.example.com/alice.png' });
      // Carol's name is not printable ASCII and her avatar is plain http: neither is sent.
      const zoe = (await item('zoe-tool')) as DiscoveryResource;
      expect(zoe.serviceName).toBe('zoe-tool');
      expect('iconUrl' in zoe).toBe(false);
      const translator = (await item('translator')) as DiscoveryResource;
      const groups = (await json<{ groups: string[] }>(await cat.fx.request(`/skills/${cat.slugs.translator}`))).groups;
      expect([...groups].sort()).toEqual([...TRANSLATOR_GROUPS].sort());
      expect(translator.tags).toEqual(groups.filter((g) => VALID_TAGS.has(g)).slice(0, 5));
      expect(translator.serviceName).toBe('translator'); // Bob has no name
    });

    it('filters by payTo, network (CAIP-2 or v1 name), scheme, type and extension', async () => {
      expect(names((await list(`?payTo=${cat.alicePay}`)).items)).toEqual(['weather-now', 'forecast-daily']);
      expect(names((await list(`?payTo=${cat.alicePay.toLowerCase()}`)).items)).toEqual(['weather-now', 'forecast-daily']);
      expect(names((await list('?network=eip155:84532')).items)).toEqual(['forecast-daily']);
      expect(names((await list('?network=base-sepolia')).items)).toEqual(['forecast-daily']);
      expect(names((await list(`?network=eip155:8453&payTo=${cat.alicePay}`)).items)).toEqual(['weather-now']);
      expect(names((await list('?scheme=exact&type=http&extensions=bazaar')).items)).toEqual(OFFERED);
      for (const none of [
        '?network=eip155:31337', // skills there, but no token known: not offered
        '?network=solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
        '?scheme=upto',
        '?type=mcp',
        '?extensions=payment-identifier',
        `?payTo=0x${'0'.repeat(40)}`,
      ]) {
        const answer = await list(none);
        expect({ none, items: answer.items, total: answer.pagination.total }).toEqual({ none, items: [], total: 0 });
      }
      expect((await list(`?payTo=${cat.alicePay}`)).pagination.total).toBe(2);
    });

    it('pages by limit and offset: the pages join to the whole list, the total stays', async () => {
      const pages: string[] = [];
      for (let offset = 0; offset < OFFERED.length + 2; offset += 2) {
        const answer = await list(`?limit=2&offset=${offset}`);
        expect(answer.pagination).toEqual({ limit: 2, offset, total: OFFERED.length });
        pages.push(...names(answer.items));
      }
      expect(pages).toEqual(OFFERED);
      expect((await list('?limit=100&offset=100')).items).toEqual([]);
    });

    it('refuses bad values with 400 in the error shape', async () => {
      // Every refusal names the field.
      for (const [query, field] of [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=2.5', 'limit'],
        ['limit=ten', 'limit'],
        ['offset=-1', 'offset'],
        ['offset=100001', 'offset'],
        ['payTo=0x1234', 'payTo'],
        ['payTo=alice', 'payTo'],
        ['network=not%20a%20network', 'network'],
        [`type=${'x'.repeat(33)}`, 'type'],
      ] as const) {
        const res = await cat.fx.request(`/discovery/resources?${query}`);
        const body = await json(res);
        expect({ query, status: res.status, code: body.code }).toEqual({ query, status: 400, code: 'VALIDATION' });
        expect(body.error).toStartWith(`Invalid request: query field "${field}": `);
        expect(body.requestId).toBe(res.headers.get('x-request-id'));
      }
    });

    it('drops a paused skill at once and lists it again when resumed', async () => {
      expect(names((await list()).items)).toContain('summarize'); // now in the read cache
      await cat.patch(cat.bob, 'summarize', { isActive: false });
      expect(names((await list()).items)).toEqual(OFFERED.filter((n) => n !== 'summarize'));
      await cat.patch(cat.bob, 'summarize', { isActive: true });
      expect(names((await list()).items)).toEqual(OFFERED);
    });

    it('drops a skill once its server fails a health probe', async () => {
      const slug = await cat.register(cat.bob, { name: 'flaky-too', endpoint: `${cat.down.url}/v2`, groups: ['text'] });
      expect(names((await list()).items)).toContain('flaky-too'); // not probed yet: offered
      expect(await cat.probe()).toMatchObject({ probed: 1, down: 1 });
      await eventually(
        () => list(),
        (answer) => !names(answer.items).includes('flaky-too'),
        'the skill of the failing server leaves the catalogue',
      );
      expect((await json<{ status: string }>(await cat.fx.request(`/skills/${slug}`))).status).toBe('down');
    });

    it('leaves out a skill whose call URL is too long for payment terms, and still answers', async () => {
      // The registry's own limit keeps such URLs out of new listings; an older row may hold one.
      const slug = await cat.register(cat.bob, { name: 'long-url', groups: ['text'] });
      const long = `${cat.up.url}/${'p'.repeat(2048)}/long-url`;
      await cat.fx.database.db.update(skills).set({ endpoint: long }).where(eq(skills.slug, slug));
      const answer = await cat.fx.request('/discovery/resources?limit=100&type=http'); // a page not asked for before
      expect(answer.status).toBe(200);
      expect(names((await json<DiscoveryResourcesAnswer>(answer)).items)).not.toContain('long-url');
      const found = await cat.fx.request('/discovery/search?query=url&type=http');
      expect(found.status).toBe(200);
      expect((await json<{ resources: unknown[] }>(found)).resources).toEqual([]);
      await cat.fx.database.db.update(skills).set({ isActive: false }).where(eq(skills.slug, slug));
    });

    it('answers from the read cache with an entity tag: the same request again is a 304', async () => {
      const first = await cat.fx.request('/discovery/resources?limit=3');
      const etag = first.headers.get('etag');
      expect(first.headers.get('cache-control')).toBe('public, max-age=1');
      expect(etag).toBeTruthy();
      const again = await cat.fx.request('/discovery/resources?limit=3', { headers: { 'if-none-match': etag! } });
      expect(again.status).toBe(304);
    });

    it('is documented in /openapi.json with its query parameters', async () => {
      const doc = await json(await cat.fx.request('/openapi.json'));
      const op = doc.paths['/discovery/resources'].get;
      expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(
        ['extensions', 'limit', 'network', 'offset', 'payTo', 'scheme', 'type'].sort(),
      );
      expect(op.responses['200'].content['application/json'].schema.properties.items).toBeDefined();
      expect(doc.paths['/discovery/search'].get.parameters.map((p: { name: string }) => p.name)).toContain('query');
    });
  });
}
