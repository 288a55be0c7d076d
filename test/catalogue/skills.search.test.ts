import { beforeAll, describe, expect, it } from 'bun:test';
import { bearer, jsonPost } from '../support/auth';
import { registryFixture } from '../support/registry';
import { json, newCreator, skillInput, type Creator } from '../support/catalogue';
import { databaseKinds } from '../support/database';

for (const kind of databaseKinds) {
  describe(`GET /skills on ${kind}`, () => {
    const fx = registryFixture(kind);
    let alice: Creator;
    let bob: Creator;
    beforeAll(async () => {
      alice = await newCreator(fx.request);
      bob = await newCreator(fx.request);
      await alice.group('weather');
      await bob.group('text');
      const reg = (c: Creator, body: Record<string, unknown>) => {
        fx.clock.advance(1);
        return fx.request('/skills', jsonPost(skillInput({ paymentAddress: c.address, ...body }), bearer(c.key)));
      };
      await reg(alice, {
        name: 'forecast-daily',
        description: 'Tomorrow’s weather for any city',
        price: '$0.01',
        groups: ['weather'],
        category: 'data',
      });
      await reg(alice, { name: 'weather-now', description: 'Current conditions', price: '$0.002', groups: ['weather'], category: 'data' });
      await reg(bob, {
        name: 'translator',
        description: 'Translates text between languages',
        price: '$0.05',
        groups: ['text'],
        category: 'language',
      });
      await reg(bob, { name: 'summarize', description: 'Summaries of long text', price: '$0.2', groups: ['text'] });
    });

    const names = async (query: string) => (await json<any[]>(await fx.request(`/skills?${query}`))).map((s) => s.name);

    it('answers a JSON array for the existing client’s query, q always sent', async () => {
      const res = await fx.request('/skills?q=&category=&minPrice=&maxPrice=&creator=&verified=&group=');
      expect(res.status).toBe(200);
      expect(Array.isArray(await res.json())).toBe(true);
    });

    it('gives each listed price as "$0.01" and as the plain decimal priceUsdc', async () => {
      const listed = await json<any[]>(await fx.request('/skills?sort=price'));
      expect(listed.map((s) => [s.price, s.priceUsdc, s.priceAtomic])).toEqual([
        ['$0.002', '0.002', '2000'],
        ['$0.01', '0.01', '10000'],
        ['$0.05', '0.05', '50000'],
        ['$0.2', '0.2', '200000'],
      ]);
    });

    it('ranks a name match above a description match', async () => {
      expect(await names('q=weather')).toEqual(['weather-now', 'forecast-daily']);
    });

    it('matches prefixes and stems', async () => {
      expect(await names('q=transl')).toEqual(['translator']);
      expect(await names('q=translations')).toEqual(['translator']);
      expect(await names('q=summar')).toEqual(['summarize']);
    });

    it('requires every word to match', async () => {
      expect(await names('q=weather%20city')).toEqual(['forecast-daily']);
      expect(await names('q=weather%20languages')).toEqual([]);
    });

    it('finds as the user types: each word a prefix, from three letters', async () => {
      expect(await names('q=wea')).toEqual(['weather-now', 'forecast-daily']);
      expect(await names('q=weather%20cit')).toEqual(['forecast-daily']);
      expect(await names('q=tra')).toEqual(['translator']);
    });

    it('tolerates a typo in a single word by trigram similarity to the name, with the other filters', async () => {
      expect(await names('q=wether')).toEqual(['weather-now']);
      expect(await names('q=trnslator')).toEqual(['translator']);
      expect(await names('q=forcast')).toEqual(['forecast-daily']);
      expect(await names('q=wether&category=language')).toEqual([]);
      expect(await names(`q=wether&creator=${alice.address}`)).toEqual(['weather-now']);
      expect(await names(`q=wether&creator=${bob.address}`)).toEqual([]);
      expect(await names('q=zzzzqqq')).toEqual([]);
      // Not for several words (every word must match), nor for short ones.
      expect(await names('q=wether%20city')).toEqual([]);
      expect(await names('q=wez')).toEqual([]);
      const res = await fx.request('/skills?q=wether&limit=1');
      expect(res.headers.get('x-next-cursor')).toBeNull();
    });

    it('treats punctuation in q as text, not query syntax', async () => {
      expect((await fx.request(`/skills?q=${encodeURIComponent("weather' | !(:*&")}`)).status).toBe(200);
      expect(await names(`q=${encodeURIComponent('weather!!!')}`)).toEqual(['weather-now', 'forecast-daily']);
    });

    it('filters by price range, creator, group and category', async () => {
      expect(await names('minPrice=0.01&maxPrice=0.05&sort=price')).toEqual(['forecast-daily', 'translator']);
      expect(await names(`creator=${bob.address.toLowerCase()}&sort=price`)).toEqual(['translator', 'summarize']);
      expect(await names('group=weather&sort=price')).toEqual(['weather-now', 'forecast-daily']);
      expect(await names('category=language')).toEqual(['translator']);
      expect(await names('verified=true')).toEqual([]);
    });

    it('sorts by price, newest, popular and revenue', async () => {
      const byPrice = await names(`sort=price&creator=${alice.address}`);
      expect(byPrice).toEqual(['weather-now', 'forecast-daily']);
      expect(await names(`sort=newest&creator=${bob.address}`)).toEqual(['summarize', 'translator']);
      expect((await fx.request('/skills?sort=popular')).status).toBe(200);
      expect((await fx.request('/skills?sort=revenue')).status).toBe(200);
    });

    it('answers 400 for a bad cursor, price filter, creator or sort', async () => {
      for (const query of ['cursor=garbage', 'minPrice=cheap', 'creator=0x12', 'sort=random', 'limit=0', 'limit=101', 'sort=relevance']) {
        const res = await fx.request(`/skills?${query}`);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
      }
    });
  });

  describe(`paging through 100 skills on ${kind}`, () => {
    // One creator lists all 100: without the hourly limit on new listings.
    const fx = registryFixture(kind, { catalogue: { allowHttpEndpoints: false, viewWindowSeconds: 3600, newSkillsPerHour: 0 } });
    let creator: Creator;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
      const group = await creator.group('bulk');
      for (let i = 0; i < 100; i++) {
        fx.clock.advance(i % 3 === 0 ? 0 : 1);
        const res = await fx.request(
          '/skills',
          jsonPost(
            skillInput({
              paymentAddress: creator.address,
              name: `bulk-${i}`,
              description: i % 2 ? 'bulk tool' : 'bulk helper tool',
              price: `$0.00${(i % 9) + 1}`,
              groups: [group.name],
            }),
            bearer(creator.key),
          ),
        );
        if (res.status !== 201) throw new Error(await res.text());
      }
    }, 120_000);

    async function pageAll(query: string, limit: number): Promise<string[]> {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 100; pages++) {
        const res: Response = await fx.request(`/skills?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        const page = await json<any[]>(res);
        seen.push(...page.map((s) => s.name));
        cursor = res.headers.get('x-next-cursor');
        if (cursor) expect(res.headers.get('link')).toContain('rel="next"');
        if (!cursor) return seen;
        expect(page).toHaveLength(limit);
      }
      throw new Error('too many pages');
    }

    for (const [sort, query] of [
      ['newest', `creator=${'$creator'}&sort=newest`],
      ['price', `creator=${'$creator'}&sort=price`],
      ['relevance', 'q=bulk&sort=relevance'],
      ['popular', `creator=${'$creator'}&sort=popular`],
    ] as const) {
      it(`returns every skill exactly once by ${sort}`, async () => {
        const names = await pageAll(query.replace('$creator', creator.address), 7);
        expect(names).toHaveLength(100);
        expect(new Set(names).size).toBe(100);
      });
    }

    it('orders pages by price ascending across page boundaries', async () => {
      const res = await fx.request(`/skills?creator=${creator.address}&sort=price&limit=100`);
      const prices = (await json<any[]>(res)).map((s) => BigInt(s.priceAtomic));
      expect(prices).toEqual([...prices].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    });
  });

  describe(`GET /skills?q= with words the parser reads as numbers, on ${kind}`, () => {
    const fx = registryFixture(kind);

    it('finds a hyphenated name by a part that alone reads as a number', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      // Alone, "9e9e9e9e" parses as the number 9e9 followed by the word e9e9e; inside the name it stays whole.
      // After a hyphen, digits alone are a negative number: "tick-12345678" is `tick` and `-12345678`.
      // And "w-12-6ba1f5" is `w`, `-12`, `-6` and `ba1f5`: the whole name, read as the name is, finds it.
      for (const name of ['tick-9e9e9e9e', 'tick-8e012345', 'tock-abc123', 'tack-12345678', 'w-12-6ba1f5'])
        expect(
          (
            await fx.request(
              '/skills',
              jsonPost(skillInput({ paymentAddress: creator.address, name, groups: [group.name] }), bearer(creator.key)),
            )
          ).status,
        ).toBe(201);
      const found = async (q: string) => (await json<any[]>(await fx.request(`/skills?q=${q}`))).map((s) => s.name);
      expect(await found('tick-9e9e9e9e')).toEqual(['tick-9e9e9e9e']);
      expect(await found('9e9e9e9e')).toEqual(['tick-9e9e9e9e']);
      expect(await found('tick-8e012345')).toEqual(['tick-8e012345']);
      expect((await found('tick')).sort()).toEqual(['tick-8e012345', 'tick-9e9e9e9e']);
      expect(await found('tack-12345678')).toEqual(['tack-12345678']);
      expect(await found('1234567')).toEqual(['tack-12345678']);
      expect(await found('w-12-6ba1f5')).toEqual(['w-12-6ba1f5']);
      // A stop word is still dropped, not required.
      expect(await found('the%20tock')).toEqual(['tock-abc123']);
    });
  });
}
