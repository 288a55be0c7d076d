/**
 * Calls paid over payment channels (x402 `batch-settlement`, our contract on anvil): the skill
 * server's call records count as calls at once (and its creator hears `call.paid`, the money
 * earned), but as paid calls and revenue only once the chain shows the channel claimed that far
 * for the skill's payment address; forged records (beyond the claim, another receiver's channel, a
 * repeated or overlapping charge, a channel that does not exist) never raise revenue, and a refused
 * one is taken back out of the calls; the payout ledger's totals equal the claimed amounts;
 * creators hear `channel.claimed` and `channel.settled`. Claims are made directly against the contract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { eq } from 'drizzle-orm';
import { webhookDelivery } from 'skill-market/registry';
import { PAYMENT_VERIFICATION_DEFAULTS, readHealthConfig } from '../../src/config';
import { channelCalls, skills, webhookDeliveries } from '../../src/db/schema';
import { bearer, jsonPost, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import {
  channelState,
  claimRow,
  type LocalChain,
  type OpenChannel,
  openChannel,
  receiverState,
  settlementTx,
  signVoucher,
  startChain,
} from '../support/chain';
import { databaseKinds } from '../support/database';
import { registryFixture, chainVerifier } from '../support/registry';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, payees: 2 });
}, 60_000);
afterAll(() => chain?.stop());

const local = readHealthConfig({ MARKET_HEALTH_ALLOW_PRIVATE: 'true' }, 'test');
/** An hour: longer than the longest pause between two looks at a watched channel. */
const LATER = 3601;

for (const kind of databaseKinds) {
  describe(`channel revenue on ${kind}`, () => {
    const fx = registryFixture(kind, { health: local });
    let creator: Creator;
    const config = { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: false, maxAttempts: 2, retryBaseSeconds: 10 };

    beforeAll(async () => {
      creator = await newCreator(fx.request);
      const hook = await fx.request(
        '/webhooks',
        jsonPost({ url: 'http://127.0.0.1:9/hooks', events: ['call.paid', 'channel.claimed', 'channel.settled'] }, bearer(creator.token)),
      );
      expect(hook.status).toBe(201);
    }, 60_000);

    /** One background round, after the pause of every watched channel has passed. */
    const verify = () => {
      fx.clock.advance(LATER);
      return chainVerifier(fx, chain, config).verifyNow();
    };
    /** A skill at $0.001 paid to the receiver of a fresh channel (10,000 deposited). */
    const skillWithChannel = async () => {
      const channel = await openChannel(chain);
      await creator.prove(channel.receiver);
      const res = await creator.register({ price: '$0.001', paymentAddress: channel.receiver.address, network: chain.network });
      expect(res.status).toBe(201);
      const skill = await json(res);
      return { id: skill.id as string, slug: skill.slug as string, channel };
    };
    const record = async (calls: Record<string, unknown>[]) => {
      const res = await fx.request('/analytics/calls', jsonPost({ calls }, bearer(creator.key)));
      expect(res.status).toBe(200);
      return (await json(res)).results as { status: string; reason?: string; message?: string }[];
    };
    const call = (skillId: string, channelId: string, cumulative: bigint, amount = '0.001') => ({
      skillId,
      channelId,
      chargedCumulativeAmount: cumulative.toString(),
      amount,
    });
    /** The receiver's authorizer claims `total` on a voucher for `voucherMax`, mined before it returns. */
    const claim = async (channel: OpenChannel, total: bigint, voucherMax = total) => {
      const voucher = await signVoucher(chain, channel.payer, channel.config, voucherMax);
      await settlementTx(chain, channel.authorizer, 'claim', [[claimRow(channel.config, voucherMax, voucher, total)]]);
    };
    const analytics = async (skillId: string) => json(await fx.request(`/analytics/${skillId}`));
    /** The fixture clock's UTC day now. */
    const today = () => fx.clock.now().toISOString().slice(0, 10);
    /** A skill's daily series entry of `day`. */
    const onDay = (stats: { daily: { date: string }[] }, day: string) => stats.daily.find((d) => d.date === day);
    /** The `data` of every stored delivery of `type`, each checked against the event's documented schema. */
    const deliveries = async (type: 'call.paid' | 'channel.claimed' | 'channel.settled') => {
      const rows = await fx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, type));
      for (const row of rows)
        expect([...Value.Errors(webhookDelivery(type), row.payload)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
      return rows.map((d) => (d.payload as { data: Record<string, unknown> }).data);
    };

    it('counts channel calls as calls when reported, as paid calls and revenue only once their claim is mined, and settled once swept', async () => {
      const { id, slug, channel } = await skillWithChannel();
      const day = today();
      expect(await record([1000n, 2000n, 3000n].map((c) => call(id, channel.channelId, c)))).toEqual([
        { status: 'recorded' },
        { status: 'recorded' },
        { status: 'recorded' },
      ]);
      // Calls at once, on today's series too; no money counted yet.
      let stats = await analytics(id);
      expect(stats).toMatchObject({ callCount: 3, paidCallCount: 0, totalRevenueAtomic: '0' });
      expect(onDay(stats, day)).toMatchObject({ calls: 3, revenueAtomic: '0' });
      const earned = (await deliveries('call.paid')).filter((d) => d.channelId === channel.channelId);
      expect(earned.map((d) => d.chargedCumulativeAmount).sort()).toEqual(['1000', '2000', '3000']);
      expect(earned[0]).toMatchObject({ skill: slug, scheme: 'batch-settlement', amount: '1000', state: 'earned', payer: null });
      await verify();
      stats = await analytics(id);
      expect(stats).toMatchObject({ callCount: 3, paidCallCount: 0, totalRevenueAtomic: '0' });
      expect(stats.channels).toEqual({
        earnedCalls: 3,
        earnedAtomic: '3000',
        claimedCalls: 0,
        claimedAtomic: '0',
        settledAtomic: '0',
        refusedCalls: 0,
      });

      // A claim of 2,000 on the voucher for 3,000: two calls are paid, the third is still earned.
      await claim(channel, 2000n, 3000n);
      await verify();
      stats = await analytics(id);
      expect(stats).toMatchObject({ paidCallCount: 2, callCount: 3, totalRevenueAtomic: '2000' });
      expect(onDay(stats, day)).toMatchObject({ calls: 3, revenueAtomic: '2000' });
      expect(stats.channels).toMatchObject({ earnedCalls: 1, earnedAtomic: '1000', claimedCalls: 2, claimedAtomic: '2000' });
      expect(await deliveries('channel.claimed')).toContainEqual(
        expect.objectContaining({ skill: slug, channelId: channel.channelId, calls: 2, amount: '2000', totalClaimed: '2000' }),
      );

      await claim(channel, 3000n);
      await verify();
      stats = await analytics(id);
      expect(stats).toMatchObject({ paidCallCount: 3, totalRevenueAtomic: '3000' });
      // The channel's payer is one buyer of the skill, a repeat one.
      expect(await json(await fx.request(`/skills/${slug}`))).toMatchObject({ paidCallCount: 3, buyerCount: 1, repeatBuyerCount: 1 });
      expect(stats.channels).toMatchObject({ earnedCalls: 0, claimedAtomic: '3000', settledAtomic: '0' });

      // The settle sweep pays the receiver what was claimed: the calls are settled.
      await settlementTx(chain, channel.authorizer, 'settle', [channel.receiver.address, chain.token.address]);
      expect(await receiverState(chain, channel.receiver.address)).toEqual({ totalClaimed: 3000n, totalSettled: 3000n });
      await verify();
      expect((await analytics(id)).channels).toMatchObject({ claimedAtomic: '3000', settledAtomic: '3000' });
      expect(await deliveries('channel.settled')).toContainEqual(
        expect.objectContaining({ skill: slug, channelId: channel.channelId, calls: 3, amount: '3000', settledClaimed: '3000' }),
      );
      expect((await channelState(chain, channel.config)).totalClaimed).toBe(3000n);
    }, 60_000);

    it('never lets a forged record raise revenue above what was claimed for the skill', async () => {
      const { id, channel } = await skillWithChannel();
      const stranger = await openChannel(chain); // pays someone else
      const day = today();
      const results = await record([
        call(id, channel.channelId, 1000n),
        call(id, channel.channelId, 1000n), // the same cumulative again
        call(id, channel.channelId, 1500n), // 1,000 charged within a step of 500: overlaps the first
        call(id, channel.channelId, 9000n), // beyond what will be claimed
        call(id, stranger.channelId, 1000n),
        call(id, `0x${'ee'.repeat(32)}`, 1000n), // no such channel
        call(id, channel.channelId, 500n, '0.001'), // 1,000 charged on a cumulative of 500
      ]);
      expect(results.map((r) => r.status)).toEqual(['recorded', 'duplicate', 'recorded', 'recorded', 'recorded', 'recorded', 'refused']);
      expect(results[6]).toMatchObject({ reason: 'invalid-amount', message: expect.stringContaining('cumulative') });
      expect(await analytics(id)).toMatchObject({ callCount: 5, paidCallCount: 0 });

      await claim(channel, 2000n);
      await claim(stranger, 5000n);
      await verify();
      await verify(); // the missing channel is refused after the configured checks
      const stats = await analytics(id);
      // The three refused records are calls no more: one counted, one still earned.
      expect(stats).toMatchObject({ callCount: 2, paidCallCount: 1, totalRevenueAtomic: '1000' });
      expect(onDay(stats, day)).toMatchObject({ calls: 2, revenueAtomic: '1000' });
      expect(stats.channels).toMatchObject({
        claimedCalls: 1,
        claimedAtomic: '1000',
        earnedCalls: 1,
        earnedAtomic: '1000',
        refusedCalls: 3,
      });
      expect(BigInt(stats.totalRevenueAtomic)).toBeLessThanOrEqual((await channelState(chain, channel.config)).totalClaimed);
    }, 60_000);

    it('counts a charge once across skills: another creator’s records cannot block it, a second skill of the payee cannot share it', async () => {
      const { id, channel } = await skillWithChannel();
      const other = await newCreator(fx.request);
      const theirs = await json(await other.register({ price: '$0.001', network: chain.network }));
      const first = await fx.request('/analytics/call', jsonPost(call(theirs.id, channel.channelId, 1000n), bearer(other.key)));
      expect(await json(first)).toEqual({ success: true, recorded: true });
      fx.clock.advance(1);
      expect(await record([call(id, channel.channelId, 1000n)])).toEqual([{ status: 'recorded' }]);
      fx.clock.advance(1);
      const twin = await json(
        await creator.register({ price: '$0.001', paymentAddress: channel.receiver.address, network: chain.network }),
      );
      expect(await record([call(twin.id, channel.channelId, 1000n)])).toEqual([{ status: 'recorded' }]);

      await claim(channel, 1000n);
      await verify();
      expect(await analytics(id)).toMatchObject({ paidCallCount: 1, totalRevenueAtomic: '1000' });
      expect(await analytics(id)).toMatchObject({ callCount: 1 });
      // A refused record is no call of its skill.
      const refused = { callCount: 0, paidCallCount: 0, totalRevenueAtomic: '0', channels: { refusedCalls: 1 } };
      expect(await analytics(twin.id)).toMatchObject(refused);
      expect(await analytics(theirs.id)).toMatchObject(refused);
    }, 60_000);

    it('never credits another creator with a payee’s channel: a skill naming the payee is refused, one naming an unproven payee counts nothing', async () => {
      const { id, channel } = await skillWithChannel();
      const other = await newCreator(fx.request);
      // Naming the payee's address is refused at registration, with how to prove an address.
      const named = await other.register({ price: '$0.001', paymentAddress: channel.receiver.address, network: chain.network });
      expect(named.status).toBe(400);
      expect(await json(named)).toMatchObject({ code: 'VALIDATION', error: expect.stringContaining('/wallet/challenge') });
      // A listing that names it anyway (written before payees were proven) earns nothing from it,
      // whatever order the records arrive in.
      const theirs = await json(await other.register({ price: '$0.0001', network: chain.network }));
      await fx.database.db.update(skills).set({ paymentAddress: channel.receiver.address }).where(eq(skills.id, theirs.id));
      const finer = [100n, 200n, 300n, 400n, 500n, 600n, 700n, 800n, 900n, 1000n].map((c) =>
        call(theirs.id, channel.channelId, c, '0.0001'),
      );
      const sent = await fx.request('/analytics/calls', jsonPost({ calls: finer }, bearer(other.key)));
      expect((await json(sent)).recorded).toBe(10);
      fx.clock.advance(1);
      expect(await record([call(id, channel.channelId, 1000n)])).toEqual([{ status: 'recorded' }]);
      await claim(channel, 1000n);
      await verify();
      expect(await analytics(id)).toMatchObject({ paidCallCount: 1, totalRevenueAtomic: '1000' });
      expect(await analytics(theirs.id)).toMatchObject({
        callCount: 0,
        paidCallCount: 0,
        totalRevenueAtomic: '0',
        channels: { refusedCalls: 10 },
      });
      const reasons = await fx.database.db
        .select({ reason: channelCalls.reason })
        .from(channelCalls)
        .where(eq(channelCalls.skillId, theirs.id));
      expect(new Set(reasons.map((r) => r.reason))).toEqual(
        new Set([`the skill’s creator has not proven holding the channel’s receiver ${channel.receiver.address}`]),
      );
    }, 60_000);

    it('counts nothing of a channel under the price or from the creator’s own address', async () => {
      // Under the price: refused when reported, so never a call.
      const { id, channel } = await skillWithChannel();
      const [under] = await record([call(id, channel.channelId, 999n, '0.000999')]);
      expect(under).toMatchObject({ status: 'refused', reason: 'invalid-amount', message: expect.stringContaining('under the 1000') });
      // A channel the creator pays from another address it has proven: no paid call, no revenue.
      const self = await openChannel(chain, { receiver: channel.receiver });
      await creator.prove(self.payer);
      expect(await record([call(id, self.channelId, 1000n)])).toEqual([{ status: 'recorded' }]);
      await claim(self, 1000n);
      await verify();
      expect(await analytics(id)).toMatchObject({ callCount: 0, paidCallCount: 0, totalRevenueAtomic: '0', channels: { refusedCalls: 1 } });
      const [row] = await fx.database.db
        .select({ reason: channelCalls.reason })
        .from(channelCalls)
        .where(eq(channelCalls.channelId, self.channelId.toLowerCase()));
      expect(row?.reason).toContain('an address of the skill’s own creator');
    }, 60_000);

    it('refuses a channel record without its partner field, with a paymentRef, or from another creator', async () => {
      const { id, channel } = await skillWithChannel();
      const results = await record([
        { skillId: id, channelId: channel.channelId, amount: '0.001' },
        { skillId: id, chargedCumulativeAmount: '1000', amount: '0.001' },
        { ...call(id, channel.channelId, 1000n), paymentRef: `0x${'ab'.repeat(32)}` },
        { skillId: id, channelId: channel.channelId, chargedCumulativeAmount: '1000' },
      ]);
      expect(results.map((r) => r.reason)).toEqual(['invalid-amount', 'invalid-amount', 'invalid-amount', 'invalid-amount']);
      const single = await fx.request(
        '/analytics/call',
        jsonPost({ skillId: id, channelId: channel.channelId, amount: '0.001' }, bearer(creator.key)),
      );
      expect(single.status).toBe(400);
      expect(await json(single)).toMatchObject({ code: 'VALIDATION', error: expect.stringContaining('chargedCumulativeAmount') });
      const malformed = await fx.request('/analytics/call', jsonPost({ ...call(id, '0x12', 1000n) }, bearer(creator.key)));
      expect(malformed.status).toBe(400);
      const other = await newCreator(fx.request);
      const res = await fx.request('/analytics/call', jsonPost(call(id, channel.channelId, 1000n), bearer(other.key)));
      expect(res.status).toBe(403);
    });

    it('looks at a channel paid call after call no sooner than the pause after its last look, and still refuses a late record overlapping a settled count', async () => {
      const { id, channel } = await skillWithChannel();
      const claimed = async () => (await analytics(id)).channels.claimedCalls as number;
      expect(await record([call(id, channel.channelId, 1000n)])).toEqual([{ status: 'recorded' }]);
      await verify();
      await claim(channel, 1000n);
      // A new record right after a look: the channel is not read again until the pause has passed.
      expect(await record([call(id, channel.channelId, 2000n)])).toEqual([{ status: 'recorded' }]);
      const verifier = chainVerifier(fx, chain, config);
      await verifier.verifyNow();
      expect(await claimed()).toBe(0);
      fx.clock.advance(fx.config.payments.retryBaseSeconds);
      await verifier.verifyNow();
      expect(await claimed()).toBe(1);

      await claim(channel, 2000n);
      await settlementTx(chain, channel.authorizer, 'settle', [channel.receiver.address, chain.token.address]);
      await verify();
      expect((await analytics(id)).channels).toMatchObject({ claimedCalls: 2, claimedAtomic: '2000', settledAtomic: '2000' });
      // Long after: a record whose charge reaches into the settled ones is refused, the next one counts.
      expect(await record([call(id, channel.channelId, 1500n), call(id, channel.channelId, 3000n)])).toEqual([
        { status: 'recorded' },
        { status: 'recorded' },
      ]);
      await claim(channel, 3000n);
      await verify();
      expect((await analytics(id)).channels).toMatchObject({ claimedCalls: 3, claimedAtomic: '3000', refusedCalls: 1, earnedCalls: 0 });
    }, 60_000);

    it('lists the creator’s channels and the payer’s own, with balance, charged, claimed and settled', async () => {
      const { id, slug, channel } = await skillWithChannel();
      await record([call(id, channel.channelId, 1000n), call(id, channel.channelId, 2000n)]);
      await claim(channel, 1000n);
      await verify();
      const mine = await json(await fx.request('/analytics/channels', { headers: bearer(creator.key) }));
      expect(mine.find((c: { channelId: string }) => c.channelId === channel.channelId)).toMatchObject({
        skills: [slug],
        payer: channel.payer.address,
        receiver: channel.receiver.address,
        state: 'unclaimed',
        balanceAtomic: '10000',
        chargedAtomic: '2000',
        claimedAtomic: '1000',
        earnedCalls: 1,
        countedCalls: 1,
        payerAtomic: '8000', // the deposit of 10,000 less the 2,000 charged (not the 1,000 claimed)
        withdrawingAtomic: '0',
        withdrawInitiatedAt: null,
      });
      const payer = await walletSignIn(fx.request, channel.payer);
      const paying = await json(await fx.request('/analytics/channels?role=payer', { headers: bearer(payer.token) }));
      expect(paying.map((c: { channelId: string }) => c.channelId)).toEqual([channel.channelId]);
      expect((await fx.request('/analytics/channels')).status).toBe(401);
    }, 60_000);

    it('puts claimed channel revenue in the payout ledger, totals equal to the claims on chain', async () => {
      const fresh = await newCreator(fx.request);
      const channel = await openChannel(chain);
      await fresh.prove(channel.receiver);
      const res = await fresh.register({ price: '$0.001', paymentAddress: channel.receiver.address, network: chain.network });
      const skill = await json(res);
      const day = fx.clock.now().toISOString().slice(0, 10);
      const calls = [1000n, 2000n, 3000n, 4000n].map((c) => call(skill.id, channel.channelId, c));
      expect((await json(await fx.request('/analytics/calls', jsonPost({ calls }, bearer(fresh.key))))).recorded).toBe(4);
      await claim(channel, 3000n, 4000n);
      await settlementTx(chain, channel.authorizer, 'settle', [channel.receiver.address, chain.token.address]);
      await verify();
      const csv = await (await fx.request('/analytics/revenue.csv', { headers: bearer(fresh.key) })).text();
      const claimed = (await channelState(chain, channel.config)).totalClaimed;
      expect(csv.trimEnd().split('\r\n')).toEqual([
        'date,skill,paid_calls,revenue_usdc,revenue_atomic,exact_atomic,upto_atomic,channel_claimed_atomic,channel_settled_atomic,channel_unclaimed_atomic',
        `${day},${skill.slug},3,0.003000,3000,0,0,3000,3000,1000`,
        `total,,3,0.003000,${claimed},0,0,${claimed},3000,1000`,
      ]);
      expect(await chain.balanceOf(channel.receiver.address)).toBe(claimed);
    }, 60_000);
  });
}
