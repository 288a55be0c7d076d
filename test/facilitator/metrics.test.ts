/**
 * The facilitator's /metrics after real payments on anvil: a settled payment moves the settlement,
 * paid-call and charged-amount counters and the settlement latency histogram by exactly one call
 * and its price, with the scheme, network and asset as labels and never the payer; a refused one
 * is counted by its reason; the relayer's gas balance and the transactions not yet final are read
 * when scraped. A facilitator built in process without a metrics setting answers 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { hostedChannels } from '../../src/db/schema';
import { type LocalChain, startChain } from '../support/chain';
import { databaseKinds } from '../support/database';
import { PRICE, type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';
import { type Sample, scrape, sampleValue } from '../support/metrics';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 2 });
}, 60_000);
afterAll(() => chain.stop());

for (const kind of databaseKinds) {
  describe(`the facilitator's metrics (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
    }, 60_000);
    afterAll(() => f.close());

    const read = () => scrape((path, init) => f.facilitator.app.handle(new Request(`http://localhost${path}`, init)));
    const moved = (before: Sample[], after: Sample[]) => (name: string, labels: Record<string, string>) =>
      (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0);

    it('counts a settled payment once: the settlement, the paid call, its price and its latency', async () => {
      const payer = chain.accounts.payers[0]!;
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, payer, requirementsFor(chain, payee.address));
      const before = (await read()).samples;

      const res = await f.post('/settle', body);
      expect(await res.json()).toMatchObject({ success: true, payer: payer.address });
      await f.settled(); // requests are counted as their access-log lines are written
      const { samples: after, text } = await read();
      const diff = moved(before, after);
      const where = { scheme: 'exact', network: chain.network };

      expect(diff('market_settlements_total', { ...where, outcome: 'settled', reason: 'none' })).toBe(1);
      expect(diff('market_paid_calls_total', where)).toBe(1);
      expect(diff('market_charged_atomic_total', { ...where, asset: chain.token.address })).toBe(Number(PRICE));
      expect(diff('market_settlement_duration_seconds_count', { ...where, outcome: 'settled' })).toBe(1);
      expect(diff('market_settlement_duration_seconds_bucket', { ...where, outcome: 'settled', le: '+Inf' })).toBe(1);
      expect(diff('market_settlement_duration_seconds_sum', { ...where, outcome: 'settled' })).toBeGreaterThan(0);
      expect(diff('market_http_requests_total', { method: 'POST', route: '/settle', status: '200' })).toBe(1);
      // Labels are few: no payer, payee or transaction in the exposition.
      for (const address of [payer.address, payee.address]) expect(text.toLowerCase()).not.toContain(address.toLowerCase().slice(2));
      // Mined: nothing is pending, and the relayer's balance is read from the chain.
      expect(sampleValue(after, 'market_pending_transactions', { ...where })).toBe(0);
      expect(
        sampleValue(after, 'market_relayer_balance_eth', { relayer: chain.accounts.relayer.address, network: chain.network }),
      ).toBeGreaterThan(0);
      expect(
        sampleValue(after, 'market_relayer_queued_transactions', { relayer: chain.accounts.relayer.address, network: chain.network }),
      ).toBe(0);
      expect(sampleValue(after, 'market_channel_claims_due')).toBe(0);
      expect(sampleValue(after, 'market_metrics_reading_errors_total', { metric: 'market_relayer_balance_eth' })).toBeUndefined();
    });

    it('counts a refused settlement by its reason, and a body that is no request as invalid_request, without a paid call', async () => {
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, chain.accounts.payers[1]!, requirementsFor(chain, payee.address));
      expect((await f.facilitator.settle(body)).success).toBe(true);
      const before = (await read()).samples;

      const replay = await f.facilitator.settle(body); // the same authorization again: already used
      expect(replay.success).toBe(false);
      expect((await f.post('/settle', { x402Version: 2 })).status).toBe(400);
      const diff = moved(before, (await read()).samples);
      const where = { scheme: 'exact', network: chain.network };

      expect(diff('market_settlements_total', { ...where, outcome: 'failed', reason: replay.errorReason as string })).toBe(1);
      expect(diff('market_settlement_duration_seconds_count', { ...where, outcome: 'failed' })).toBe(1);
      expect(
        diff('market_settlements_total', { scheme: 'other', network: 'other', outcome: 'invalid_request', reason: 'invalid_request' }),
      ).toBe(1);
      expect(diff('market_paid_calls_total', where)).toBe(0);
      expect(diff('market_charged_atomic_total', { ...where, asset: chain.token.address })).toBe(0);
    });

    it('counts the hosted channels charged beyond their claims, with the age of the oldest unclaimed charge', async () => {
      const channelId = `0x${'ab'.repeat(32)}`;
      const unclaimedSince = Date.now() - 120_000;
      await f.database.db.insert(hostedChannels).values({
        channelId,
        receiver: chain.accounts.relayer.address.toLowerCase(),
        state: { channelId, chargedCumulativeAmount: '5000', totalClaimed: '1000', unclaimedSince },
        chargedCumulativeAmount: '5000',
      });
      try {
        const { samples } = await read();
        expect(sampleValue(samples, 'market_channel_claims_due')).toBe(1);
        expect(sampleValue(samples, 'market_channel_claim_oldest_seconds')).toBeGreaterThanOrEqual(120);
      } finally {
        await f.database.db.delete(hostedChannels).where(eq(hostedChannels.channelId, channelId));
      }
      expect(sampleValue((await read()).samples, 'market_channel_claims_due')).toBe(0);
    });

    it('answers 404 on /metrics when built in process without a metrics setting', async () => {
      const plain = await startFacilitatorFixture(chain, kind, { config: { metrics: undefined }, start: false, database: f.database });
      try {
        expect((await plain.get('/metrics')).status).toBe(404);
      } finally {
        await plain.close();
      }
    });
  });
}
