import { beforeAll, describe, expect, it } from 'bun:test';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { confirmReportedPayments, json, newCreator, txHash, type Creator } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { registryFixture } from '../support/registry';

for (const kind of databaseKinds) {
  describe(`a consumer's own history and favourites on ${kind}`, () => {
    const fx = registryFixture(kind);
    let creator: Creator;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
    });
    const newSkill = async (overrides: Record<string, unknown> = {}) => json(await creator.register(overrides));
    const pay = async (token: string, skillId: string, amount: number, paymentRef?: string) => {
      const res = await fx.request('/analytics/usage', jsonPost({ skillId, amount, ...(paymentRef ? { paymentRef } : {}) }, bearer(token)));
      expect(res.status).toBe(200);
    };
    const usage = (token: string, query = '') => fx.request(`/analytics/usage${query}`, { headers: bearer(token) });
    const favorite = (token: string, skillId: string, action: 'add' | 'remove') =>
      fx.request('/analytics/favorite', jsonPost({ skillId, action }, bearer(token)));

    it('lists the caller’s paid calls newest first with exact amounts, and never another user’s', async () => {
      const cheap = await newSkill({ price: '$0.001', network: 'eip155:84532' });
      const dear = await newSkill({ price: '$2.5' });
      const me = await walletSignIn(fx.request);
      const someoneElse = await walletSignIn(fx.request);
      const ref = `0x${'cd'.repeat(32)}`;
      await pay(me.token, cheap.id, 1000, ref);
      fx.clock.advance(1);
      await pay(someoneElse.token, cheap.id, 7);
      fx.clock.advance(1);
      await pay(me.token, dear.id, 2_500_001);

      const res = await usage(me.token);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-next-cursor')).toBeNull();
      expect(res.headers.get('link')).toBeNull();
      const records = await json(res);
      expect(records).toHaveLength(2);
      expect(records[0]).toMatchObject({
        skillId: dear.id,
        skillSlug: dear.slug,
        skillName: dear.name,
        amount: '2.500001',
        amountAtomic: '2500001',
        paymentRef: null,
        network: 'eip155:8453',
        verification: 'none',
        verificationReason: null,
      });
      expect(records[1]).toEqual({
        id: records[1].id,
        skillId: cheap.id,
        skillSlug: cheap.slug,
        skillName: cheap.name,
        amount: '0.001',
        amountAtomic: '1000',
        paymentRef: ref,
        network: 'eip155:84532',
        verification: 'pending',
        verificationReason: null,
        scheme: 'exact',
        channel: null,
        createdAt: new Date(fx.clock.now().getTime() - 2000).toISOString(),
      });
      expect(records[0].id).toMatch(/^[0-9a-f-]{36}$/);
      // The history follows the payment's on-chain check; a reference that is no transaction is rejected at once.
      await confirmReportedPayments(fx.database.db, fx.clock.now());
      fx.clock.advance(1);
      await pay(me.token, dear.id, 2_500_001, 'not-a-transaction');
      const checked = await json(await usage(me.token));
      expect(checked.map((r: any) => [r.paymentRef, r.verification])).toEqual([
        ['not-a-transaction', 'rejected'],
        [null, 'none'],
        [ref, 'verified'],
      ]);

      const theirs = await json(await usage(someoneElse.token));
      expect(theirs.map((r: any) => r.amountAtomic)).toEqual(['7']);
      expect(await json(await usage((await walletSignIn(fx.request)).token))).toEqual([]);
    });

    it('answers the same history to the user’s consumer and creator keys', async () => {
      const skill = await newSkill();
      const me = await walletSignIn(fx.request);
      await pay(me.token, skill.id, 42);
      const viaSession = await json(await usage(me.token));
      for (const type of ['consumer', 'creator'] as const) {
        const { key } = await createKey(fx.request, me.token, type);
        expect(await json(await usage(key))).toEqual(viaSession);
      }
    });

    it('pages with the cursor in X-Next-Cursor and Link, without repeats or gaps, also among records made in the same instant', async () => {
      const skill = await newSkill();
      const me = await walletSignIn(fx.request);
      const other = await walletSignIn(fx.request);
      for (let i = 1; i <= 25; i++) {
        await pay(me.token, skill.id, i);
        await pay(other.token, skill.id, 1000 + i);
        if (i % 3 === 0) fx.clock.advance(1); // several records share a timestamp
      }
      const seen: string[] = [];
      let query = '?limit=10';
      const sizes: number[] = [];
      for (let page = 0; page < 5 && query; page++) {
        const res = await usage(me.token, query);
        expect(res.status).toBe(200);
        const records = await json(res);
        sizes.push(records.length);
        seen.push(...records.map((r: any) => r.amountAtomic));
        const cursor = res.headers.get('x-next-cursor');
        if (cursor) {
          expect(res.headers.get('link')).toBe(`</analytics/usage?limit=10&cursor=${cursor}>; rel="next"`);
          query = `?limit=10&cursor=${cursor}`;
        } else {
          expect(res.headers.get('link')).toBeNull();
          query = '';
        }
      }
      expect(sizes).toEqual([10, 10, 5]);
      // Newest first; records of the same instant follow their id, the tie-breaker of the cursor.
      const whole = await json(await usage(me.token, '?limit=100'));
      expect(seen).toEqual(whole.map((r: any) => r.amountAtomic));
      expect([...seen].sort((x, y) => Number(x) - Number(y))).toEqual(Array.from({ length: 25 }, (_, i) => String(i + 1)));
      const times = whole.map((r: any) => Date.parse(r.createdAt));
      expect(times).toEqual([...times].sort((x, y) => y - x));
      expect(await json(await usage(me.token))).toHaveLength(20);
    });

    it('keeps another user’s records out even when that user’s cursor is presented', async () => {
      const skill = await newSkill();
      const me = await walletSignIn(fx.request);
      const other = await walletSignIn(fx.request);
      await pay(me.token, skill.id, 9);
      for (let i = 0; i < 3; i++) {
        fx.clock.advance(1);
        await pay(other.token, skill.id, 5);
      }
      const cursor = (await usage(other.token, '?limit=1')).headers.get('x-next-cursor')!;
      expect(cursor).toBeString();
      const mine = await json(await usage(me.token, `?cursor=${cursor}`));
      expect(mine.map((r: any) => r.amountAtomic)).toEqual(['9']);
    });

    it('answers 400 for a cursor it did not issue and a limit outside 1–100', async () => {
      const me = await walletSignIn(fx.request);
      const forge = (value: unknown, id: unknown) => `?cursor=${Buffer.from(JSON.stringify([value, id])).toString('base64url')}`;
      const uuid = '00000000-0000-4000-8000-000000000000';
      const forged = [
        forge('yesterday', uuid),
        forge('2026-02-30T00:00:00.000Z', uuid),
        forge('+275760-09-13T00:00:00.000Z', uuid),
        forge('2026-11-22', uuid),
        forge('2026-11-22T12:00:00.000Z', '-'.repeat(36)),
        forge(1, uuid),
      ];
      for (const query of ['?cursor=nonsense', ...forged, '?limit=0', '?limit=101', '?limit=2.5', '?limit=many']) {
        const res = await usage(me.token, query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        const body = await json(res);
        expect(body.code).toBe('VALIDATION');
        expect(body.requestId).toBeString();
      }
      expect((await usage(me.token, '?limit=100')).status).toBe(200);
      expect((await usage(me.token, forge('2026-11-22T12:00:00.000Z', uuid))).status).toBe(200);
    });

    it('lists favourites most recently favourited first, inactive ones included and flagged', async () => {
      const [a, b, c] = [await newSkill(), await newSkill(), await newSkill()];
      const me = await walletSignIn(fx.request);
      const other = await walletSignIn(fx.request);
      for (const skill of [a, b, c]) {
        await favorite(me.token, skill.id, 'add');
        fx.clock.advance(1);
      }
      await favorite(me.token, b.id, 'remove');
      await favorite(me.token, a.id, 'add'); // already a favourite: keeps its place
      await favorite(other.token, b.id, 'add');
      const patched = await fx.request(`/skills/${c.slug}`, {
        method: 'PATCH',
        headers: { ...bearer(creator.key), 'content-type': 'application/json' },
        body: JSON.stringify({ isActive: false }),
      });
      expect(patched.status).toBe(200);

      const res = await fx.request('/analytics/favorites', { headers: bearer(me.token) });
      expect(res.status).toBe(200);
      const list = await json(res);
      expect(list.map((s: any) => s.slug)).toEqual([c.slug, a.slug]);
      expect(list[0]).toEqual(await json(await fx.request(`/skills/${c.slug}`)));
      expect(list[0]).toMatchObject({ isActive: false, favoriteCount: 1 });
      expect(list[1].isActive).toBe(true);
      expect((await json(await fx.request('/analytics/favorites', { headers: bearer(other.token) }))).map((s: any) => s.slug)).toEqual([
        b.slug,
      ]);
      expect(await json(await fx.request('/analytics/favorites', { headers: bearer((await walletSignIn(fx.request)).token) }))).toEqual([]);
    });
  });

  describe(`the daily series length on ${kind}`, () => {
    const fx = registryFixture(kind, { trustedProxies: ['127.0.0.1'] });
    let creator: Creator;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
    });
    const series = (skillId: string, query = '') => fx.request(`/analytics/${skillId}${query}`);
    const day = (offset: number) => new Date(fx.clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10);

    it('covers the asked number of days, oldest first, zero-filled, with exact revenue per day', async () => {
      const skill = await json(await creator.register({ price: '$0.250001' }));
      // A key, not a session: the clock moves days ahead, past the session's lifetime.
      const { key } = await createKey(fx.request, (await walletSignIn(fx.request)).token, 'consumer');
      let tx = 100;
      const pay = async () =>
        expect(
          (await fx.request('/analytics/usage', jsonPost({ skillId: skill.id, amount: 250_001, paymentRef: txHash(++tx) }, bearer(key))))
            .status,
        ).toBe(200);
      await pay();
      fx.clock.advance(5 * 86_400);
      await pay();
      await pay();
      await fx.request('/analytics/view', {
        ...jsonPost({ skillId: skill.id }),
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.7' },
      });
      fx.clock.advance(3 * 86_400); // today: nothing yet
      // Revenue counts once the payments are verified, on the day each was reported.
      expect(await confirmReportedPayments(fx.database.db, fx.clock.now())).toBe(3);

      const week = await json(await series(skill.id, '?days=7'));
      expect(week.daily.map((d: any) => d.date)).toEqual(Array.from({ length: 7 }, (_, i) => day(i - 6)));
      expect(week.daily.find((d: any) => d.date === day(-3))).toEqual({
        date: day(-3),
        views: 1,
        calls: 2,
        revenue: '0.500002',
        revenueAtomic: '500002',
      });
      expect(
        week.daily
          .filter((d: any) => d.date !== day(-3))
          .every((d: any) => d.views === 0 && d.calls === 0 && d.revenue === '0' && d.revenueAtomic === '0'),
      ).toBe(true);
      expect(week.totalRevenueAtomic).toBe('750003');

      const month = await json(await series(skill.id, '?days=30'));
      expect(month.daily).toHaveLength(30);
      expect(month.daily.at(-1).date).toBe(day(0));
      expect(month.daily.find((d: any) => d.date === day(-8))).toMatchObject({ calls: 1, revenue: '0.250001', revenueAtomic: '250001' });
      expect(await json(await series(skill.id))).toEqual(month);
      expect((await json(await series(skill.id, '?days=1'))).daily.map((d: any) => d.date)).toEqual([day(0)]);
      expect((await json(await series(skill.id, '?days=90'))).daily).toHaveLength(90);
    });

    it('answers 400 for a length outside 1–90 or not a whole number', async () => {
      const skill = await json(await creator.register());
      for (const days of ['0', '-1', '1e400', '91', '-7', '7.5', 'week', '', 'Infinity', 'NaN']) {
        const res = await series(skill.id, `?days=${days}`);
        expect({ days, status: res.status }).toEqual({ days, status: 400 });
        expect(await json(res)).toMatchObject({
          code: 'VALIDATION',
          error: 'Invalid request: query field "days": must be a whole number from 1 to 90',
        });
      }
    });
  });
}
