/** `GET /discovery/search`: the registry's ranked, typo-tolerant skill search over the Bazaar catalogue. */
import { describe, expect, it } from 'bun:test';
import type { DiscoverySearchAnswer } from 'skill-market/registry';
import { json } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { discoveryCatalogue, names } from './fixture';

for (const kind of databaseKinds) {
  describe(`GET /discovery/search on ${kind}`, () => {
    const cat = discoveryCatalogue(kind);
    const search = async (query: string) => {
      const res = await cat.fx.request(`/discovery/search?${query}`);
      expect(res.status).toBe(200);
      return json<DiscoverySearchAnswer>(res);
    };
    const found = async (query: string) => names((await search(query)).resources);

    it('ranks a name match above a description match, in the Bazaar search answer', async () => {
      const answer = await search('query=weather');
      expect(names(answer.resources)).toEqual(['weather-now', 'forecast-daily']);
      expect(answer).toMatchObject({ x402Version: 2, partialResults: false, pagination: { limit: 20, cursor: null } });
      expect(answer.resources[0]).toMatchObject({
        type: 'http',
        serviceName: 'Alice Tools',
        accepts: [{ scheme: 'exact', amount: '2000' }],
      });
    });

    it('matches prefixes and stems, and tolerates one misspelt word', async () => {
      expect(await found('query=transl')).toEqual(['translator']);
      expect(await found('query=translations')).toEqual(['translator']);
      expect(await found('query=wether')).toEqual(['weather-now']);
    });

    it('applies the filters of the listing', async () => {
      expect(await found('query=weather&network=base-sepolia')).toEqual(['forecast-daily']);
      expect(await found(`query=weather&payTo=${cat.alicePay}&network=eip155:8453`)).toEqual(['weather-now']);
      expect((await found(`query=text&payTo=${cat.bobPay}`)).sort()).toEqual(['summarize', 'translator']);
      expect(await found('query=weather&type=mcp')).toEqual([]);
      expect(await found('query=weather&scheme=upto')).toEqual([]);
    });

    it('leaves out a skill whose server is down, one on a network whose token it does not know, and a paused one', async () => {
      expect(await found('query=often%20down')).toEqual([]); // flaky: its server failed the probe
      expect(await found('query=echoes')).toEqual([]); // local-echo: eip155:31337
      expect(await found('query=flaky')).toEqual([]); // not even by a misspelt name
      expect(await found('query=summaries')).toEqual(['summarize']);
      await cat.patch(cat.bob, 'summarize', { isActive: false });
      expect(await found('query=summaries')).toEqual([]);
      await cat.patch(cat.bob, 'summarize', { isActive: true });
      expect(await found('query=summaries')).toEqual(['summarize']);
    });

    it('pages by cursor without repeating or skipping; without a query, newest first', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const answer: DiscoverySearchAnswer = await search(`limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(answer.pagination.limit).toBe(2);
        expect(answer.resources.length).toBeLessThanOrEqual(2);
        seen.push(...names(answer.resources));
        cursor = answer.pagination.cursor;
      } while (cursor);
      expect(seen).toEqual(['zoe-tool', 'summarize', 'translator', 'forecast-daily', 'weather-now']);
    });

    it('refuses a cursor it did not issue and an overlong query with 400 in the error shape', async () => {
      for (const [query, error] of [
        ['cursor=***', 'Invalid request: field "cursor": not a cursor this registry issued'],
        [
          `query=weather&cursor=${Buffer.from('["x","y"]').toString('base64url')}`,
          'Invalid request: field "cursor": not a cursor this registry issued',
        ],
        [`query=${'w'.repeat(201)}`, /^Invalid request: query field "query": /],
        ['limit=0', /^Invalid request: /],
        ['payTo=bob', /^Invalid request: query field "payTo": /],
      ] as const) {
        const res = await cat.fx.request(`/discovery/search?${query}`);
        const body = await json(res);
        expect({ query, status: res.status, code: body.code }).toEqual({ query, status: 400, code: 'VALIDATION' });
        if (typeof error === 'string') expect(body.error).toBe(error);
        else expect(body.error).toMatch(error);
        expect(body.requestId).toBe(res.headers.get('x-request-id'));
      }
    });

    it('answers the same search from the read cache, with an entity tag', async () => {
      const first = await cat.fx.request('/discovery/search?query=weather');
      const again = await cat.fx.request('/discovery/search?query=weather', { headers: { 'if-none-match': first.headers.get('etag')! } });
      expect(again.status).toBe(304);
    });
  });
}
