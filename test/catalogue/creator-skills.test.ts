import { describe, expect, it } from 'bun:test';
import { bearer, jsonPost, walletSignIn } from '../support/auth';
import { confirmReportedPayments, json, newCreator, txHash } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';

for (const kind of oneDatabase) {
  describe(`a creator's own skill table on ${kind}`, () => {
    const fx = registryFixture(kind, { trustedProxies: ['127.0.0.1'] });

    it('lists every own skill, inactive ones too, with what the table shows: counters, exact revenue, price, groups, schemas', async () => {
      const creator = await newCreator(fx.request);
      const tools = await creator.group('tools');
      const text = await creator.group('text');
      const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
      const outputSchema = { type: 'object', properties: { words: { type: 'integer' } } };
      const counted = await json(
        await creator.register({ name: 'alpha-count', price: '$0.25', groups: [tools.name, text.slug], inputSchema, outputSchema }),
      );
      const hidden = await json(await creator.register({ name: 'beta-hidden', price: '0.000001', groups: [tools.name] }));
      await fx.request(`/skills/${hidden.slug}`, {
        method: 'PATCH',
        headers: { ...bearer(creator.key), 'content-type': 'application/json' },
        body: JSON.stringify({ isActive: false }),
      });
      const stranger = await newCreator(fx.request);
      await stranger.register({ name: 'not-mine' });

      const consumer = await walletSignIn(fx.request);
      for (const ip of ['198.51.100.1', '198.51.100.2']) {
        await fx.request('/analytics/view', {
          ...jsonPost({ skillId: counted.id }),
          headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        });
      }
      for (const paymentRef of [txHash(1), txHash(2), txHash(3)]) {
        await fx.request('/analytics/call', jsonPost({ skillId: counted.id, paymentRef }, bearer(creator.key)));
        await fx.request('/analytics/usage', jsonPost({ skillId: counted.id, amount: 250_000, paymentRef }, bearer(consumer.token)));
      }
      await fx.request('/analytics/usage', jsonPost({ skillId: hidden.id, amount: 1, paymentRef: txHash(4) }, bearer(consumer.token)));
      expect(await confirmReportedPayments(fx.database.db, fx.clock.now())).toBe(4);
      await fx.request('/analytics/favorite', jsonPost({ skillId: counted.id, action: 'add' }, bearer(consumer.token)));

      for (const credential of [creator.key, creator.token]) {
        const res = await fx.request('/creators/me/skills', { headers: bearer(credential) });
        expect(res.status).toBe(200);
        const table = await json(res);
        expect(table.map((s: any) => s.name)).toEqual(['alpha-count', 'beta-hidden']);
        expect(table[0]).toMatchObject({
          slug: counted.slug,
          price: '$0.25',
          priceAtomic: '250000',
          isActive: true,
          groups: ['text', 'tools'],
          inputSchema,
          outputSchema,
          viewCount: 2,
          callCount: 3,
          favoriteCount: 1,
          totalRevenue: '0.75',
          totalRevenueAtomic: '750000',
        });
        expect(table[1]).toMatchObject({
          slug: hidden.slug,
          isActive: false,
          price: '$0.000001',
          groups: ['tools'],
          inputSchema: null,
          totalRevenue: '0.000001',
          totalRevenueAtomic: '1',
        });
        expect(table[0]).toEqual(await json(await fx.request(`/skills/${counted.slug}`)));
      }
    });

    it('answers an empty table to a creator without skills', async () => {
      const creator = await newCreator(fx.request);
      expect(await json(await fx.request('/creators/me/skills', { headers: bearer(creator.key) }))).toEqual([]);
    });
  });
}
