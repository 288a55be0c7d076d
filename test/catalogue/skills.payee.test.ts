/**
 * A skill earns only for an address its creator has proven, and a count costs a price: a
 * registration naming an address the creator has not proven is refused with how to prove one (the
 * sign-in wallet and wallets registered with a proof are accepted, as the other SDK's `serve()`
 * sends them); for a day after a price cut, a call paid at the cut price is not a paid call; a
 * payment from another address of the skill's own creator never counts.
 */
import { describe, expect, it } from 'bun:test';
import { and, eq } from 'drizzle-orm';
import { paymentVerifications } from '../../src/db/schema';
import { markVerified } from '../../src/registry/modules/payment-verification/store';
import { bearer, jsonPost, newWallet } from '../support/auth';
import { json, newCreator, skillInput, txHash } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { registryFixture } from '../support/registry';

const DAY_SECONDS = 24 * 3600;

for (const kind of databaseKinds) {
  describe(`payment addresses and what a count costs on ${kind}`, () => {
    const fx = registryFixture(kind);

    it('refuses a payment address its creator has not proven, and says how to prove one', async () => {
      const someoneElse = newWallet();
      const creator = await newCreator(fx.request);
      const res = await creator.register({ paymentAddress: someoneElse.address });
      expect(res.status).toBe(400);
      const body = await json(res);
      const error = String(body.error);
      expect(body).toMatchObject({ code: 'VALIDATION', details: [{ field: 'paymentAddress' }] });
      expect(error).toContain('field "paymentAddress"');
      expect(error).toContain(someoneElse.address);
      expect(error).toContain('POST /wallet/challenge');
      // Registering the address without a proof does not make it the creator's to be paid.
      const unproven = await fx.request('/wallet/generate', jsonPost({ address: someoneElse.address }, bearer(creator.key)));
      expect(unproven.status).toBe(201);
      expect((await creator.register({ paymentAddress: someoneElse.address })).status).toBe(400);
    });

    it('accepts the sign-in wallet, as the other SDK registers it, and a wallet proven with its signature', async () => {
      const creator = await newCreator(fx.request);
      const group = await creator.group();
      // The other SDK: an API key, a price as a JSON number, the account's wallet as payment address.
      const theirs = await fx.request(
        '/skills',
        jsonPost(skillInput({ price: 0.001, paymentAddress: creator.address.toLowerCase(), groups: [group.name] }), bearer(creator.key)),
      );
      expect(theirs.status).toBe(201);
      const payout = newWallet();
      await creator.prove(payout);
      const proven = await creator.register({ paymentAddress: payout.address });
      expect(proven.status).toBe(201);
      expect(await json(proven)).toMatchObject({ paymentAddress: payout.address });
      // The proven wallet is this creator's: another creator can neither name it nor prove it.
      const other = await newCreator(fx.request);
      expect((await other.register({ paymentAddress: payout.address })).status).toBe(400);
    });

    it('does not count a payment at a price cut less than a day old, and counts it once the cut has stood a day', async () => {
      const creator = await newCreator(fx.request);
      const skill = await json(await creator.register({ price: '$0.001' }));
      const patch = (price: string) =>
        fx.request(`/skills/${skill.slug}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', ...bearer(creator.key) },
          body: JSON.stringify({ price }),
        });
      const report = async (n: number) => {
        const res = await fx.request(
          '/analytics/calls',
          jsonPost({ calls: [{ skillId: skill.id, paymentRef: txHash(n), amountAtomic: '1' }] }, bearer(creator.key)),
        );
        expect(res.status).toBe(200);
        const [row] = await fx.database.db
          .select()
          .from(paymentVerifications)
          .where(and(eq(paymentVerifications.skillId, skill.id), eq(paymentVerifications.txHash, txHash(n))));
        return row!;
      };
      expect((await patch('$0.000001')).status).toBe(200);
      const cut = await report(9001);
      expect(cut).toMatchObject({ status: 'rejected', expectedAmount: 1n });
      expect(cut.reason).toContain('price cut less than a day ago');
      // A rise sets no floor, and a second cut within the day keeps the price before the first.
      fx.clock.advance(60);
      expect((await patch('$0.0005')).status).toBe(200);
      fx.clock.advance(60);
      expect((await patch('$0.000001')).status).toBe(200);
      expect((await report(9002)).status).toBe('rejected');
      fx.clock.advance(DAY_SECONDS + 1);
      expect(await report(9003)).toMatchObject({ status: 'pending', reason: null, expectedAmount: 1n });
    });

    it('never counts a payment from another address of the skill’s creator', async () => {
      const creator = await newCreator(fx.request);
      const spending = newWallet();
      await creator.prove(spending);
      const skill = await json(await creator.register({ price: '$0.001' }));
      const outsider = newWallet().address;
      const ids: string[] = [];
      for (const n of [9101, 9102]) {
        await fx.request(
          '/analytics/calls',
          jsonPost({ calls: [{ skillId: skill.id, paymentRef: txHash(n), amountAtomic: '1000' }] }, bearer(creator.key)),
        );
        const [row] = await fx.database.db
          .select()
          .from(paymentVerifications)
          .where(eq(paymentVerifications.txHash, txHash(n)));
        ids.push(row!.id);
      }
      const found = (payer: string) => ({ transfers: [{ payer, logIndex: 0 }], amount: 1000n, blockNumber: 1n });
      expect(await markVerified(fx.database.db, ids[0]!, found(spending.address), fx.clock.now())).toBe('rejected');
      expect(await markVerified(fx.database.db, ids[1]!, found(outsider), fx.clock.now())).toBe('counted');
      const [self] = await fx.database.db.select().from(paymentVerifications).where(eq(paymentVerifications.id, ids[0]!));
      expect(self!.reason).toContain('another address of its creator');
      expect(await json(await fx.request(`/analytics/${skill.id}`))).toMatchObject({ paidCallCount: 1, totalRevenueAtomic: '1000' });
    });
  });
}
