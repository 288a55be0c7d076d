import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { bearer, jsonPost } from '../support/auth';
import { registryFixture } from '../support/registry';
import { json, newCreator, skillInput } from '../support/catalogue';
import { databaseKinds } from '../support/database';

for (const kind of databaseKinds) {
  describe(`POST /skills on ${kind}`, () => {
    const fx = registryFixture(kind);

    it('creates with 201 then updates with 200, keeping the slug', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      const input = skillInput({ paymentAddress: creator.address, name: 'weather', groups: [group.name] });
      const first = await fx.request('/skills', jsonPost(input, bearer(creator.key)));
      expect(first.status).toBe(201);
      const created = await json(first);
      expect(created).toMatchObject({
        name: 'weather',
        price: '$0.001',
        priceAtomic: '1000',
        currency: 'USDC',
        network: 'eip155:8453',
        endpoint: 'https://skills.example.com/weather',
        groups: [group.name],
        isActive: true,
        callCount: 0,
        totalRevenue: '0',
      });
      const second = await fx.request('/skills', jsonPost({ ...input, price: 0.002 }, bearer(creator.key)));
      expect(second.status).toBe(200);
      const updated = await json(second);
      expect(updated).toMatchObject({ slug: created.slug, id: created.id, price: '$0.002', priceAtomic: '2000' });
    });

    it('keeps a price its owner edited (PATCH, as the dashboard does) when the skill is registered again', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      const input = skillInput({ paymentAddress: creator.address, name: 'edited', price: '$0.003', groups: [group.name] });
      const created = await json(await fx.request('/skills', jsonPost(input, bearer(creator.key))));
      const edit = await fx.request(`/skills/${created.slug}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', ...bearer(creator.token) },
        body: JSON.stringify({ price: '$0.005' }),
      });
      expect(edit.status).toBe(200);
      const again = await fx.request('/skills', jsonPost({ ...input, description: 'v2' }, bearer(creator.key)));
      expect(again.status).toBe(200);
      expect(await json(again)).toMatchObject({ slug: created.slug, price: '$0.005', priceAtomic: '5000', description: 'v2' });
    });

    it('changes nothing, not even updatedAt, when re-registered with identical data', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      const input = skillInput({
        paymentAddress: creator.address,
        groups: [group.name],
        inputSchema: { type: 'object', properties: { b: { type: 'string' }, a: { type: 'number' } } },
      });
      const created = await json(await fx.request('/skills', jsonPost(input, bearer(creator.key))));
      fx.clock.advance(60);
      const again = await fx.request('/skills', jsonPost(input, bearer(creator.key)));
      expect(again.status).toBe(200);
      expect((await json(again)).updatedAt).toBe(created.updatedAt);
      const changed = await json(await fx.request('/skills', jsonPost({ ...input, description: 'Now better' }, bearer(creator.key))));
      expect(changed.updatedAt).not.toBe(created.updatedAt);
      expect(changed.description).toBe('Now better');
    });

    it('applies a changed endpoint and schemas on re-registration, and never reactivates', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      const input = skillInput({ paymentAddress: creator.address, groups: [group.name] });
      const created = await json(await fx.request('/skills', jsonPost(input, bearer(creator.key))));
      await fx.request(`/skills/${created.slug}`, {
        method: 'PATCH',
        headers: { ...bearer(creator.key), 'content-type': 'application/json' },
        body: '{"isActive":false}',
      });
      const moved = await json(
        await fx.request(
          '/skills',
          jsonPost({ ...input, endpoint: 'https://new.example.com/base/', outputSchema: { type: 'object' } }, bearer(creator.key)),
        ),
      );
      expect(moved.endpoint).toBe(`https://new.example.com/base/${input.name}`);
      expect(moved.outputSchema).toEqual({ type: 'object' });
      expect(moved.isActive).toBe(false);
    });

    it('takes an endpoint ending in /<name> as the full call URL', async () => {
      const creator = await newCreator(fx.request);
      const res = await json(await creator.register({ name: 'echo', endpoint: 'https://api.example.com/v1/echo' }));
      expect(res.endpoint).toBe('https://api.example.com/v1/echo');
    });

    it('gives the same name from two creators two stable, URL-safe slugs', async () => {
      const a = await json(await (await newCreator(fx.request)).register({ name: 'Translate_Text' }));
      // On another server: one endpoint is one listing (test/moderation/intake.test.ts).
      const b = await json(
        await (await newCreator(fx.request)).register({ name: 'Translate_Text', endpoint: 'https://other.example.com' }),
      );
      expect(b.name).toBe('Translate_Text');
      expect(a.slug).toMatch(/^[a-z0-9-]+$/);
      expect(b.slug).not.toBe(a.slug);
    });

    it('stores the price as integer micro-USDC, exactly', async () => {
      const creator = await newCreator(fx.request);
      const created = await json(await creator.register({ price: '0.3' }));
      const result = await fx.database.db.execute(
        sql`select price_atomic::text as p, pg_typeof(price_atomic)::text as t from skills where id = ${created.id}`,
      );
      const row = (Array.isArray(result) ? result : (result as any).rows)[0];
      expect(row).toEqual({ p: '300000', t: 'bigint' });
    });

    it('registers concurrently submitted duplicates as one skill', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      const input = skillInput({ paymentAddress: creator.address, groups: [group.name] });
      const results = await Promise.all(Array.from({ length: 5 }, () => fx.request('/skills', jsonPost(input, bearer(creator.key)))));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, 200, 201]);
      const slugs = new Set(await Promise.all(results.map(async (r) => (await json(r)).slug)));
      expect(slugs.size).toBe(1);
    });

    const invalid: [string, Record<string, unknown>, string][] = [
      ['a name with a slash', { name: 'a/b' }, '"name"'],
      ['a name longer than 64', { name: 'a'.repeat(65) }, '"name"'],
      ['a price with 7 decimals', { price: '$0.0000001' }, 'field "price"'],
      ['a zero price', { price: 0 }, 'field "price"'],
      ['a negative price', { price: '-1' }, 'field "price"'],
      ['a price that is not a number', { price: 'cheap' }, 'field "price"'],
      ['a price above the maximum', { price: '$1000000.01' }, 'field "price"'],
      ['a short payment address', { paymentAddress: '0x1234' }, 'field "paymentAddress"'],
      ['a payment address with a bad checksum', { paymentAddress: '0x52908400098527886E0F7030069857D2E4169Ee7' }, 'EIP-55 checksum'],
      ['a relative endpoint', { endpoint: '/skills' }, 'field "endpoint"'],
      ['an ftp endpoint', { endpoint: 'ftp://skills.example.com' }, 'field "endpoint"'],
      ['an http endpoint', { endpoint: 'http://skills.example.com' }, 'must use https'],
      ['an endpoint with credentials', { endpoint: 'https://u:p@skills.example.com' }, 'credentials'],
      ['no groups', { groups: [] }, '"groups"'],
      ['a description of 501 characters', { description: 'd'.repeat(501) }, 'CDP’s facilitator refuses a longer resource.description'],
      ['an input schema that is not JSON Schema', { inputSchema: { type: 'bogus' } }, 'field "inputSchema"'],
      ['an output schema with a dangling $ref', { outputSchema: { $ref: '#/definitions/x' } }, 'field "outputSchema"'],
    ];
    for (const [what, overrides, message] of invalid) {
      it(`answers 400 for ${what}, saying which field`, async () => {
        const creator = await newCreator(fx.request);
        const group = await creator.group();
        const res = await fx.request(
          '/skills',
          jsonPost(skillInput({ paymentAddress: creator.address, groups: [group.name], ...overrides }), bearer(creator.key)),
        );
        expect(res.status).toBe(400);
        expect((await json(res)).error).toContain(message);
      });
    }

    it('answers 400 naming a group that does not exist', async () => {
      const creator = await newCreator(fx.request);
      const res = await fx.request(
        '/skills',
        jsonPost(skillInput({ paymentAddress: creator.address, groups: ['ghost-group'] }), bearer(creator.key)),
      );
      expect(res.status).toBe(400);
      expect((await json(res)).error).toContain('"ghost-group"');
    });

    it('answers 400 naming another creator’s group', async () => {
      const owner = await newCreator(fx.request);
      const theirs = await owner.group('theirs-only');
      const creator = await newCreator(fx.request);
      const res = await fx.request(
        '/skills',
        jsonPost(skillInput({ paymentAddress: creator.address, groups: [theirs.name] }), bearer(creator.key)),
      );
      expect(res.status).toBe(400);
      expect((await json(res)).error).toContain('"theirs-only" is not one of your groups');
    });

    it('accepts the competitor SDK’s request as it is: numeric price, endpoint with the name, 201 then 200', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group('tools');
      const body = {
        name: 'summarize',
        endpoint: 'https://my.server.example/summarize',
        price: 0.001,
        // Its account's wallet, in lower case as that SDK may send it.
        paymentAddress: creator.address.toLowerCase(),
        description: 'Summaries',
        groups: ['tools'],
      };
      expect((await fx.request('/skills', jsonPost(body, bearer(creator.key)))).status).toBe(201);
      const again = await fx.request('/skills', jsonPost(body, bearer(creator.key)));
      expect(again.status).toBe(200);
      expect((await json(again)).slug).toBe('summarize');
      void group;
    });
  });

  describe(`POST /skills with http endpoints allowed on ${kind}`, () => {
    const fx = registryFixture(kind);
    it('accepts an http endpoint when configured for development', async () => {
      fx.registry = (await import('../support/registry')).registryWith(fx.database, {
        ...fx.config,
        catalogue: { ...fx.config.catalogue, allowHttpEndpoints: true },
      });
      const creator = await newCreator(fx.registry.request);
      const res = await creator.register({ endpoint: 'http://127.0.0.1:3002' });
      expect(res.status).toBe(201);
    });
  });
}
