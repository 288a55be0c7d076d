/**
 * Ranking by real buyers: `sort=popular` orders by distinct paying wallets (a repeat buyer counting
 * once more), weighed by how well the skill's server serves (uptime, recent probe success, response
 * time, from the health prober), then by paid calls, so volume from one wallet (washing) buys one
 * buyer; each listing says its buyers, repeat buyers, uptime and recent success, which follow every
 * counted payment, every payment taken back and every probe.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { and, eq, inArray } from 'drizzle-orm';
import { HEALTH_DEFAULTS } from '../../src/config';
import { paymentVerifications } from '../../src/db/schema';
import { markVerified } from '../../src/registry/modules/payment-verification/store';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { bearer, jsonPost, newWallet } from '../support/auth';
import { json, newCreator, txHash } from '../support/catalogue';
import { databaseKinds, oneDatabase } from '../support/database';
import { memoryLogger, registryFixture } from '../support/registry';

let next = 1;

/** Reports `payers.length` paid calls of the skill, each its own transaction, and verifies each as paid by its wallet. */
function paidCallsOf(fx: ReturnType<typeof registryFixture>) {
  return async (creator: { key: string }, skillId: string, payers: string[]) => {
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
}

for (const kind of databaseKinds) {
  describe(`ranking by buyers on ${kind}`, () => {
    const fx = registryFixture(kind);
    const paidCalls = paidCallsOf(fx);
    const listing = async (slug: string) => json(await fx.request(`/skills/${slug}`));

    it('counts a first payment as a buyer, a second as a repeat buyer, and ranks a repeat buyer above a single payment', async () => {
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

// 210 verified payments: on one database (the counting SQL is the same on both; the tests above run on each).
for (const kind of oneDatabase) {
  describe(`ranking by buyers against washing on ${kind}`, () => {
    const fx = registryFixture(kind);
    const paidCalls = paidCallsOf(fx);
    const listing = async (slug: string) => json(await fx.request(`/skills/${slug}`));

    it('ranks 30 wallets paying 3 calls each above one wallet paying 120 (more calls than all 30), and says the buyers on each listing', async () => {
      const creator = await newCreator(fx.request);
      const washed = await json(await creator.register({ name: 'washed', price: '$0.001' }));
      const bought = await json(await creator.register({ name: 'bought', price: '$0.001' }));
      const washer = newWallet().address;
      await paidCalls(
        creator,
        washed.id,
        Array.from({ length: 120 }, () => washer),
      );
      const wallets = Array.from({ length: 30 }, () => newWallet().address);
      await paidCalls(creator, bought.id, [...wallets, ...wallets, ...wallets]);

      expect(await listing(washed.slug)).toMatchObject({ paidCallCount: 120, buyerCount: 1, repeatBuyerCount: 1 });
      expect(await listing(bought.slug)).toMatchObject({ paidCallCount: 90, buyerCount: 30, repeatBuyerCount: 30 });
      const popular = await json<{ slug: string }[]>(await fx.request(`/skills?sort=popular&creator=${creator.address}`));
      expect(popular.map((s) => s.slug)).toEqual([bought.slug, washed.slug]);
      // The order pages exactly: one per page, the cursor continues it.
      const first = await fx.request(`/skills?sort=popular&creator=${creator.address}&limit=1`);
      const cursor = first.headers.get('x-next-cursor');
      expect((await json<{ slug: string }[]>(first)).map((s) => s.slug)).toEqual([bought.slug]);
      const second = await fx.request(`/skills?sort=popular&creator=${creator.address}&limit=1&cursor=${encodeURIComponent(cursor!)}`);
      expect((await json<{ slug: string }[]>(second)).map((s) => s.slug)).toEqual([washed.slug]);
    });
  });
}

/** A real HTTP server on 127.0.0.1 whose `/health` answers 200 after `delayMs`, or 503 once `failing` is set. */
function healthServer(delayMs = 0) {
  const state = { failing: false };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch() {
      if (delayMs > 0) await Bun.sleep(delayMs);
      return new Response('{}', { status: state.failing ? 503 : 200 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, state, stop: () => server.stop(true) };
}

for (const kind of oneDatabase) {
  describe(`ranking by service on ${kind}`, () => {
    const health = { ...HEALTH_DEFAULTS, enabled: false, allowPrivateAddresses: true };
    // Probes write from outside the app, as the background job does: read at once, without the read cache.
    const fx = registryFixture(kind, {
      catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 },
      health,
      readCacheMs: 0,
    });
    const paidCalls = paidCallsOf(fx);
    const servers = { steady: healthServer(), slow: healthServer(700), failing: healthServer() };
    afterAll(() => {
      for (const s of Object.values(servers)) s.stop();
    });

    it('ranks equal buyers by their server: answering and fast first, slow next, failing last; a new skill takes its server’s standing', async () => {
      const creator = await newCreator(fx.request);
      const group = (await creator.group()).name;
      const listed = async (name: keyof typeof servers) => {
        const skill = await json(await creator.register({ name, endpoint: servers[name].url, groups: [group] }));
        await paidCalls(
          creator,
          skill.id,
          Array.from({ length: 3 }, () => newWallet().address),
        );
        return skill as { id: string; slug: string };
      };
      const failing = await listed('failing');
      const slow = await listed('slow');
      const steady = await listed('steady');
      const popular = async () =>
        (await json<{ slug: string }[]>(await fx.request(`/skills?sort=popular&creator=${creator.address}`))).map((s) => s.slug);
      const listing = async (slug: string) => json(await fx.request(`/skills/${slug}`));

      // Before a probe: the same standing, so equal buyers and calls tie (newest id first) and nothing is said of uptime.
      expect(await listing(steady.slug)).toMatchObject({ buyerCount: 3, uptime: null, recentSuccessRate: null });

      const prober = createHealthProber({ db: fx.database.db, config: fx.config.health, clock: fx.clock, logger: memoryLogger().logger });
      expect((await prober.probeNow()).up).toBeGreaterThanOrEqual(3);
      servers.failing.state.failing = true;
      fx.clock.advance(3600);
      await prober.probeNow();
      const failed = await listing(failing.slug);
      expect(failed).toMatchObject({ status: 'down', buyerCount: 3 });
      // An hour down after a week's worth of nothing else: 1/8 of the recent share, and the hour's weight in the week.
      expect(failed.recentSuccessRate).toBe(0.875);
      expect(failed.uptime).toBeCloseTo(Math.exp(-3600 / (7 * 86_400)), 6);
      expect(await listing(steady.slug)).toMatchObject({ status: 'up', uptime: 1, recentSuccessRate: 1 });
      expect((await listing(slow.slug)).latencyMs).toBeGreaterThanOrEqual(700);
      expect(await popular()).toEqual([steady.slug, slow.slug, failing.slug]);

      // A skill listed later on the steady server ranks with it at once, above the slow and failing ones.
      const later = await json(await creator.register({ name: 'later', endpoint: servers.steady.url, groups: [group] }));
      await paidCalls(
        creator,
        later.id,
        Array.from({ length: 3 }, () => newWallet().address),
      );
      expect((await popular()).slice(0, 2).sort()).toEqual([later.slug, steady.slug].sort());
      expect((await popular()).slice(2)).toEqual([slow.slug, failing.slug]);
    }, 60_000);
  });
}
