import { beforeAll, describe, expect, it } from 'bun:test';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { registryFixture } from '../support/registry';
import { json, newCreator, untilAnswered, type Creator } from '../support/catalogue';
import { databaseKinds } from '../support/database';

for (const kind of databaseKinds) {
  describe(`analytics on ${kind}`, () => {
    const fx = registryFixture(kind, { trustedProxies: ['127.0.0.1'] });
    let creator: Creator;
    let creatorsConsumerKey: string;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
      creatorsConsumerKey = (await createKey(fx.request, creator.token, 'consumer')).key;
    });
    const newSkill = async () => json(await creator.register());
    const view = (skillId: string, ip: string) =>
      fx.request('/analytics/view', { ...jsonPost({ skillId }), headers: { 'content-type': 'application/json', 'x-forwarded-for': ip } });
    const stats = async (skillId: string) => json(await fx.request(`/analytics/${skillId}`));

    it('counts a view once per IP within the window, and again after it', async () => {
      const skill = await newSkill();
      expect(await json(await view(skill.id, '198.51.100.1'))).toEqual({ success: true, recorded: true });
      expect(await json(await view(skill.id, '198.51.100.1'))).toEqual({ success: true, recorded: false });
      await view(skill.id, '198.51.100.2');
      expect((await stats(skill.id)).viewCount).toBe(2);
      fx.clock.advance(3599);
      await view(skill.id, '198.51.100.1');
      expect((await stats(skill.id)).viewCount).toBe(2);
      fx.clock.advance(1);
      await view(skill.id, '198.51.100.1');
      expect((await stats(skill.id)).viewCount).toBe(3);
      expect((await json(await fx.request(`/skills/${skill.slug}`))).viewCount).toBe(3);
    });

    it('records calls only with the owning creator’s credentials', async () => {
      const skill = await newSkill();
      const call = (headers: Record<string, string>) =>
        fx.request('/analytics/call', jsonPost({ skillId: skill.id, amount: '0.001' }, headers));
      expect((await call({})).status).toBe(401);
      const other = await newCreator(fx.request);
      const refused = await call(bearer(other.key));
      expect(refused.status).toBe(403);
      expect((await json(refused)).error).toBe('Only the skill’s creator can record its calls');
      expect((await call(bearer(creatorsConsumerKey))).status).toBe(403);
      expect(await json(await call(bearer(creator.key)))).toEqual({ success: true, recorded: true });
      const after = await stats(skill.id);
      expect(after.callCount).toBe(1);
      expect(after.lastCalledAt).toBe(fx.clock.now().toISOString());
    });

    it('records a paymentRef once however often it is sent, and counts nothing before its payment is verified', async () => {
      const skill = await newSkill();
      const paymentRef = `0x${'ab'.repeat(32)}`;
      const results = await Promise.all(
        Array.from({ length: 10 }, () => fx.request('/analytics/call', jsonPost({ skillId: skill.id, paymentRef }, bearer(creator.key)))),
      );
      expect((await Promise.all(results.map(json))).filter((r) => r.recorded)).toHaveLength(1);
      const consumer = await walletSignIn(fx.request);
      const usage = [];
      for (let i = 0; i < 3; i++)
        usage.push(
          await json(
            await fx.request('/analytics/usage', jsonPost({ skillId: skill.id, amount: 1000, paymentRef }, bearer(consumer.token))),
          ),
        );
      expect(usage.map((u) => u.recorded)).toEqual([true, false, false]);
      // Counting waits for the on-chain check (test/catalogue/verified-payments.test.ts).
      expect(await stats(skill.id)).toMatchObject({ callCount: 0, paidCallCount: 0, totalRevenueAtomic: '0' });
    });

    it('never takes reported usage amounts as revenue', async () => {
      const skill = await newSkill();
      const consumer = await walletSignIn(fx.request);
      for (const amount of [1, 999, 500_000_000]) {
        const res = await fx.request('/analytics/usage', jsonPost({ skillId: skill.id, amount }, bearer(consumer.token)));
        expect(await json(res)).toEqual({ success: true, recorded: true });
      }
      const after = await stats(skill.id);
      expect(after.totalRevenueAtomic).toBe('0');
      expect((await json(await fx.request(`/skills/${skill.slug}`))).totalRevenue).toBe('0');
      expect(after.daily.at(-1)).toMatchObject({ date: fx.clock.now().toISOString().slice(0, 10), revenue: '0' });
      expect(after.daily).toHaveLength(30);
    });

    it('refuses usage without consumer credentials and with a fractional or negative amount', async () => {
      const skill = await newSkill();
      expect((await fx.request('/analytics/usage', jsonPost({ skillId: skill.id, amount: 10 }))).status).toBe(401);
      const consumer = await walletSignIn(fx.request);
      for (const amount of [1.5, -3, 0, 'ten']) {
        const res = await fx.request('/analytics/usage', jsonPost({ skillId: skill.id, amount }, bearer(consumer.token)));
        expect({ amount, status: res.status }).toEqual({ amount, status: 400 });
      }
    });

    it('keeps favorites idempotent per user and answers the new count at once', async () => {
      const skill = await newSkill();
      const user = await walletSignIn(fx.request);
      const fav = (action: string) => fx.request('/analytics/favorite', jsonPost({ skillId: skill.id, action }, bearer(user.token)));
      expect(await json(await fav('add'))).toEqual({ success: true, favorited: true, favoriteCount: 1 });
      expect(await json(await fav('add'))).toEqual({ success: true, favorited: true, favoriteCount: 1 });
      expect(await json(await fav('remove'))).toEqual({ success: true, favorited: false, favoriteCount: 0 });
      expect(await json(await fav('remove'))).toEqual({ success: true, favorited: false, favoriteCount: 0 });
      expect((await fav('toggle')).status).toBe(400);
    });

    it('counts 100 concurrent favorites from 100 users as exactly 100', async () => {
      const skill = await newSkill();
      const users = [];
      for (let i = 0; i < 100; i++) users.push(await walletSignIn(fx.request));
      // 100 transactions on one counter row queue for a pool of 5 connections: on a loaded machine
      // some wait past the statement deadline and get 503, which a client sends again. Adding a
      // favorite twice keeps one.
      const statuses = await Promise.all(
        users.map(
          async (u) =>
            (await untilAnswered(() => fx.request('/analytics/favorite', jsonPost({ skillId: skill.id, action: 'add' }, bearer(u.token)))))
              .status,
        ),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect((await stats(skill.id)).favoriteCount).toBe(100);
    }, 60_000);

    it('counts 100 concurrent views from 100 IPs and 100 concurrent calls as exactly 100 each', async () => {
      const skill = await newSkill();
      // A view is counted once per IP, so sending one again after a 503 (see above) never counts it twice.
      const viewStatuses = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => (await untilAnswered(() => view(skill.id, `203.0.113.${i}`))).status),
      );
      expect(viewStatuses.every((s) => s === 200)).toBe(true);
      const callStatuses = await Promise.all(
        Array.from(
          { length: 100 },
          async () => (await fx.request('/analytics/call', jsonPost({ skillId: skill.id }, bearer(creator.key)))).status,
        ),
      );
      expect(callStatuses.every((s) => s === 200)).toBe(true);
      const after = await stats(skill.id);
      expect(after.viewCount).toBe(100);
      expect(after.callCount).toBe(100);
    });

    it('answers 400 for a skillId that is not a UUID and 404 for an unknown one', async () => {
      const bad = await view('not-a-uuid', '192.0.2.1');
      expect(bad.status).toBe(400);
      expect((await json(bad)).error).toContain('skillId');
      expect((await view('00000000-0000-4000-8000-000000000000', '192.0.2.1')).status).toBe(404);
      expect((await fx.request('/analytics/00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await fx.request('/analytics/nope')).status).toBe(400);
    });
  });
}
