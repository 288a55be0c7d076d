import { beforeAll, describe, expect, it } from 'bun:test';
import { bearer, createKey, jsonPost } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';
import { expectRefusal, postJson } from './support';

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const ZERO_ID = '00000000-0000-0000-0000-000000000000';

for (const kind of oneDatabase) {
  describe(`text, cursors, schemas and amounts on ${kind}`, () => {
    const fx = registryFixture(kind);
    let creator: Creator;
    let skillId: string;
    let consumerKey: string;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
      skillId = (await json<{ id: string }>(await creator.register())).id;
      consumerKey = (await createKey(fx.request, creator.token, 'consumer')).key;
    });

    it('answers 400 for a NUL in a text field, the path or the query', async () => {
      await expectRefusal(await fx.request('/groups', postJson('{"name":"a\\u0000b"}', bearer(creator.key))), 400, 'VALIDATION');
      await expectRefusal(await fx.request('/skills/%00'), 400, 'VALIDATION');
      await expectRefusal(await fx.request('/skills?category=%00'), 400, 'VALIDATION');
      await expectRefusal(await fx.request('/skills?q=a%00b'), 400, 'VALIDATION');
    });

    it('answers 400 for an unpaired surrogate in a stored JSON field', async () => {
      const res = await creator.register({ inputSchema: { type: 'object', description: '\ud800' } });
      await expectRefusal(res, 400, 'VALIDATION');
    });

    it('answers 400 for cursors whose values do not cast, under every order', async () => {
      const forged = [
        cursorOf(['x', ZERO_ID]),
        cursorOf(['2026-01-01T00:00:00.000Z', '------------------------------------']),
        cursorOf(['2026-02-31T00:00:00.000Z', ZERO_ID]),
        cursorOf([1, ZERO_ID]),
        'not base64 at all',
      ];
      for (const cursor of forged) {
        await expectRefusal(await fx.request(`/skills?cursor=${encodeURIComponent(cursor)}`), 400, 'VALIDATION');
      }
      for (const sort of ['price', 'popular', 'revenue']) {
        for (const value of ['x', '1.5', '99999999999999999999', '0x10']) {
          await expectRefusal(await fx.request(`/skills?sort=${sort}&cursor=${cursorOf([value, ZERO_ID])}`), 400, 'VALIDATION');
        }
      }
      await expectRefusal(await fx.request(`/skills?q=skill&sort=relevance&cursor=${cursorOf(['1e-50', ZERO_ID])}`), 400, 'VALIDATION');
    });

    it('still follows the cursors it issues', async () => {
      await creator.register();
      const first = await fx.request('/skills?limit=1');
      expect(first.status).toBe(200);
      const next = first.headers.get('x-next-cursor')!;
      expect((await fx.request(`/skills?limit=1&cursor=${next}`)).status).toBe(200);
      const byPrice = await fx.request('/skills?limit=1&sort=price');
      expect((await fx.request(`/skills?limit=1&sort=price&cursor=${byPrice.headers.get('x-next-cursor')}`)).status).toBe(200);
    });

    it('answers 400 for a limit that is not a whole number from 1 to 100', async () => {
      for (const limit of ['1.5', 'x', '0', '101', '', '-1']) {
        await expectRefusal(await fx.request(`/skills?limit=${limit}`), 400, 'VALIDATION');
      }
      expect((await fx.request('/skills?limit=5')).status).toBe(200);
    });

    it('refuses schemas that are not JSON Schema objects, and never stores them as {} or split strings', async () => {
      for (const schema of ['-1', '', 'a😀', [], 5, true, { type: 'nope' }]) {
        const body = await expectRefusal(await creator.register({ inputSchema: schema }), 400, 'VALIDATION');
        expect(body.error).toContain('inputSchema');
        await expectRefusal(await creator.register({ outputSchema: schema }), 400, 'VALIDATION');
      }
      const slug = (await json<{ slug: string }>(await creator.register())).slug;
      await expectRefusal(
        await fx.request(`/skills/${slug}`, { ...jsonPost({ inputSchema: '-1' }, bearer(creator.key)), method: 'PATCH' }),
        400,
        'VALIDATION',
      );
      const stored = await json<{ inputSchema: unknown }>(await fx.request(`/skills/${slug}`));
      expect(stored.inputSchema).toBeNull();
    });

    it('accepts a JSON Schema object and null', async () => {
      const schema = { type: 'object', properties: { city: { type: 'string' } } };
      const created = await creator.register({ inputSchema: schema, outputSchema: null });
      expect(created.status).toBe(201);
      expect(await json(created)).toMatchObject({ inputSchema: schema, outputSchema: null });
    });

    it('takes usage amounts only as positive integers of micro-USDC, also in decimal digits', async () => {
      const usage = (amount: unknown) => fx.request('/analytics/usage', jsonPost({ skillId, amount }, bearer(consumerKey)));
      for (const amount of [
        '-5000000',
        '0',
        '0x10',
        '1e3',
        '0010',
        'a'.repeat(40),
        '99999999999999',
        '1000000000001',
        0,
        -1,
        1.5,
        1e13,
        '',
      ]) {
        await expectRefusal(await usage(amount), 400, 'VALIDATION');
      }
      expect((await usage('1500')).status).toBe(200);
      expect((await usage(2500)).status).toBe(200);
      expect((await usage('1000000000000')).status).toBe(200);
      // Usage is the consumer's own record (revenue comes only from payments verified on chain).
      const history = await json<{ amountAtomic: string }[]>(
        await fx.request('/analytics/usage?limit=100', { headers: bearer(consumerKey) }),
      );
      expect(history.map((r) => r.amountAtomic).sort()).toEqual(['1000000000000', '1500', '2500']);
    });
  });
}
