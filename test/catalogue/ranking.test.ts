/**
 * Ranking by real buyers: `sort=popular` orders by distinct paying wallets, then by paid calls, so
 * volume from one wallet (washing) buys one buyer; each listing says its buyers and repeat buyers,
 * which follow every counted payment and every payment taken back.
 */
import { describe, expect, it } from 'bun:test';
import { and, eq, inArray } from 'drizzle-orm';
import { paymentVerifications } from '../../src/db/schema';
import { markVerified } from '../../src/registry/modules/payment-verification/store';
import { bearer, jsonPost, newWallet } from '../support/auth';
import { json, newCreator, txHash } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { registryFixture } from '../support/registry';

for (const kind of databaseKinds) {
  describe(`ranking by buyers on ${kind}`, () => {
    const fx = registryFixture(kind);
    let next = 1;

    /** Reports `payers.length` paid calls of the skill, each its own transaction, and verifies each as paid by its wallet. */
    const paidCalls = async (creator: { key: string }, skillId: string, payers: string[]) => {
      const refs = payers.map(() => txHash(next++));
      for (let i = 0; i < refs.length; i += 100) {
        const calls = refs.slice(i, i + 100).map((paymentRef) => ({ skillId, paymentRef, amountAtomic: '1000' }));
        expect((await fx.request('/analytics/calls', jsonPost({ calls }, bearer(creator.key)))).status).toBe(200);
      }
      const checks = await fx.database.db
        .select({ id: paymentVerifications.id, txHash: paymentVerifications.txHash })
        .from(paymentVerifications)
        .where(and(eq(paymentVerifications.skillId, skillId), inArray(paymentVerifications.txHash, refs)));
      const idOf = new Map(checks.map((c) => [c.txHash, c.id]));
      for (const [i, ref] of refs.entries()) {
        const found = { transfers: [{ payer: payers[i]!, logIndex: 0 }], amount: 1000n, blockNumber: 1n };
        expect(await markVerified(fx.database.db, idOf.get(ref)!, found, fx.clock.now())).toBe('counted');
      }
    };
    const listing = async (slug: string) => json(await fx.request(`/skills/${slug}`));

    it('ranks 30 wallets paying 3 calls each above one wallet paying 1,000, and says the buyers on each listing', async () => {
      const creator = await newCreator(fx.request);
      const washed = await json(await creator.register({ name: 'washed', price: '$0.001' }));
      const bought = await json(await creator.register({ name: 'bought', price: '$0.001' }));
      const washer = newWallet().address;
      await paidCalls(
        creator,
        washed.id,
        Array.from({ length: 1000 }, () => washer),
      );
      const wallets = Array.from({ length: 30 }, () => newWallet().address);
      await paidCalls(creator, bought.id, [...wallets, ...wallets, ...wallets]);

      expect(await listing(washed.slug)).toMatchObject({ paidCallCount: 1000, buyerCount: 1, repeatBuyerCount: 1 });
      expect(await listing(bought.slug)).toMatchObject({ paidCallCount: 90, buyerCount: 30, repeatBuyerCount: 30 });
      const popular = await json<{ slug: string }[]>(await fx.request(`/skills?sort=popular&creator=${creator.address}`));
      expect(popular.map((s) => s.slug)).toEqual([bought.slug, washed.slug]);
      // The order pages exactly: one per page, the cursor continues it.
      const first = await fx.request(`/skills?sort=popular&creator=${creator.address}&limit=1`);
      const cursor = first.headers.get('x-next-cursor');
      expect((await json<{ slug: string }[]>(first)).map((s) => s.slug)).toEqual([bought.slug]);
      const second = await fx.request(`/skills?sort=popular&creator=${creator.address}&limit=1&cursor=${encodeURIComponent(cursor!)}`);
      expect((await json<{ slug: string }[]>(second)).map((s) => s.slug)).toEqual([washed.slug]);
    }, 120_000);

    it('counts a first payment as a buyer, a second as a repeat buyer, and ranks by paid calls between equal buyers', async () => {
      const creator = await newCreator(fx.request);
      const one = await json(await creator.register({ name: 'one', price: '$0.001' }));
      const two = await json(await creator.register({ name: 'two', price: '$0.001' }));
      const [a, b] = [newWallet().address, newWallet().address];
      await paidCalls(creator, one.id, [a]);
      expect(await listing(one.slug)).toMatchObject({ buyerCount: 1, repeatBuyerCount: 0 });
      await paidCalls(creator, one.id, [a.toLowerCase()]);
      expect(await listing(one.slug)).toMatchObject({ paidCallCount: 2, buyerCount: 1, repeatBuyerCount: 1 });
      await paidCalls(creator, two.id, [b]);
      const popular = await json<{ slug: string }[]>(await fx.request(`/skills?sort=popular&creator=${creator.address}`));
      expect(popular.map((s) => s.slug)).toEqual([one.slug, two.slug]);
    });
  });
}
