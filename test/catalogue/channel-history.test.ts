/**
 * Channel calls told truthfully, end to end on anvil, on both databases: our client (SkillMarket
 * with a consumer key, paying by channel) calls our skill server (`serve()`, channels claimed
 * through our facilitator, call tracking to the registry on a real port). The consumer's history
 * shows the deposit as the channel's deposit and every call as a channel call with its state
 * (earned, then claimed and settled), never a transfer pending or rejected; the creator's
 * analytics hold no rejected or pending payment, the call counters and the marketplace's CALLS
 * rise at the call (revenue at the claim); a real webhook receiver hears `call.paid` (scheme
 * batch-settlement, the money earned) within 5 s of the call. An older client's usage records (the
 * voucher digest or the deposit transaction as a paymentRef) are told for what they are too. A
 * payer's channel shows what is theirs, a pending withdrawal, and a fresh check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { SkillMarket, type PaymentReceipt } from 'skill-market';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { CHANNEL_CALL_STATES, type ChannelView, type UsageRecordView, type WebhookDelivery } from 'skill-market/registry';
import { PAYMENT_VERIFICATION_DEFAULTS, readHealthConfig, type RegistryConfig } from '../../src/config';
import { createWebhookDeliverer } from '../../src/registry/modules/webhooks';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { type LocalChain, settlementTx, startChain, type TestAccount } from '../support/chain';
import { databaseKinds } from '../support/database';
import { eventually } from '../support/eventually';
import { startFacilitatorFixture, type FacilitatorFixture } from '../support/facilitator';
import { chainVerifier, memoryLogger, registryFixture, testConfig } from '../support/registry';
import { chainAsset, loopbackServeOptions } from '../support/skill-server';
import { isWebhookDelivery } from '../support/webhooks';

/** An hour: longer than the longest pause between two looks at a watched channel. */
const LATER = 3601;

let chain: LocalChain;
let facilitator: FacilitatorFixture;
let facilitatorUrl: string;
let folder: string;
/** The registry's configuration reads this chain (set once it runs, before the fixtures start). */
const overrides: Partial<RegistryConfig> = {
  catalogue: { ...testConfig().catalogue, allowHttpEndpoints: true },
  health: readHealthConfig({ MARKET_HEALTH_ALLOW_PRIVATE: 'true' }, 'test'),
};

beforeAll(async () => {
  chain = await startChain({ payers: 1, payees: 1, relayers: 2 });
  facilitator = await startFacilitatorFixture(chain, 'embedded', { relayers: chain.accounts.relayers });
  facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  facilitatorUrl = `http://127.0.0.1:${facilitator.facilitator.app.server!.port}`;
  folder = await mkdtemp(join(tmpdir(), 'channel-history-'));
  const base = testConfig();
  overrides.chain = { ...base.chain, network: chain.network, usdcAddress: chain.token.address, rpcUrl: chain.rpcUrl };
  // Checking payments on chain is on: a payer's channels are read again when stale.
  overrides.payments = { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: true };
}, 60_000);

afterAll(async () => {
  await facilitator?.facilitator.app.stop();
  await facilitator?.close();
  await chain?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** A webhook receiver on loopback that keeps every delivery's body. */
function receiver() {
  const bodies: WebhookDelivery<'call.paid'>[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      if (!isWebhookDelivery(request)) return new Response('not a webhook', { status: 404 });
      bodies.push((await request.json()) as WebhookDelivery<'call.paid'>);
      return new Response('ok');
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hooks`, bodies, stop: () => server.stop(true) };
}

for (const kind of databaseKinds) {
  describe(`channel calls in history, analytics and webhooks on ${kind}`, () => {
    const fx = registryFixture(kind, overrides);
    let registryServer: ReturnType<typeof Bun.serve>;
    let registryUrl: string;
    let creator: Creator;
    let consumerKey: string;
    const servers: SkillServer[] = [];
    const stops: (() => unknown)[] = [];

    beforeAll(async () => {
      registryServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => fx.registry.app.handle(r) });
      registryUrl = `http://127.0.0.1:${registryServer.port}`;
      creator = await newCreator(fx.request);
      const consumer = await walletSignIn(fx.request);
      consumerKey = (await createKey(fx.request, consumer.token, 'consumer')).key;
    }, 60_000);
    afterAll(async () => {
      for (const server of servers) await server.stop();
      for (const stop of stops) await stop();
      registryServer?.stop(true);
    });

    /** Our skill server selling `name` over channels to a fresh payee (claims only when asked), tracking its calls, listed. */
    const channelSkill = async () => {
      const payeeAccount = await chain.createAccount();
      await creator.prove(payeeAccount);
      const payee = payeeAccount.address;
      const name = `tick-${crypto.randomUUID().slice(0, 8)}`;
      const server = await serve(
        { [name]: skill({ price: '$0.001' }, (input: { i: number }) => ({ i: input.i })) },
        loopbackServeOptions(chain, facilitatorUrl, payee, {
          asset: chainAsset(chain),
          channels: { store: join(folder, `${kind}-${name}`), claimAbove: '$100', claimWithinMs: 600_000 },
          trackCalls: { batchDelayMs: 20, baseDelayMs: 100 },
          apiUrl: registryUrl,
          apiKey: creator.key,
        }),
      );
      servers.push(server);
      const res = await creator.register({ name, endpoint: server.url, price: '$0.001', paymentAddress: payee, network: chain.network });
      expect(res.status).toBe(201);
      const listed = await json<{ id: string; slug: string }>(res);
      return { server, payee, ...listed };
    };
    /** A client paying by channel from `wallet`, its usage recorded with `apiKey` (the consumer's by default) unless told. */
    const market = (wallet: TestAccount, recordUsage = true, apiKey = consumerKey) =>
      new SkillMarket({
        apiUrl: registryUrl,
        apiKey,
        network: chain.network,
        assets: [{ network: chain.network, ...chainAsset(chain) }],
        wallet,
        payment: 'channel',
        maxDeposit: '$0.1',
        recordUsage,
      });
    const usage = async () => json<UsageRecordView[]>(await fx.request('/analytics/usage?limit=100', { headers: bearer(consumerKey) }));
    const analytics = async (skillId: string) => json(await fx.request(`/analytics/${skillId}`));
    const payments = async (skillId: string) =>
      json<unknown[]>(await fx.request(`/analytics/${skillId}/payments`, { headers: bearer(creator.key) }));
    const verify = () => {
      fx.clock.advance(LATER);
      return chainVerifier(fx, chain, { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: false }).verifyNow();
    };

    it('shows the deposit and each channel call as what they are, counts the calls at once, and tells the creator within seconds', async () => {
      const sink = receiver();
      stops.push(sink.stop);
      const hook = await fx.request('/webhooks', jsonPost({ url: sink.url, events: ['call.paid'] }, bearer(creator.token)));
      expect(hook.status).toBe(201);
      const deliverer = createWebhookDeliverer({
        db: fx.database.db,
        clock: fx.clock,
        logger: memoryLogger().logger,
        allowPrivateAddresses: true,
        intervalMs: 50,
      });
      deliverer.start();
      stops.push(() => deliverer.stop());

      const { id, slug, server } = await channelSkill();
      const payer = await chain.createAccount({ usdc: 1_000_000n });
      const client = market(payer);
      const receipts: PaymentReceipt[] = [];
      for (let i = 1; i <= 3; i++) receipts.push((await client.callWithReceipt(slug, { i })).receipt!);
      await client.flush();
      const [first] = receipts;
      expect(first).toMatchObject({ scheme: 'batch-settlement', chargedCumulativeAmount: '1000', deposit: '10000' });
      expect(first!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const channelId = first!.channelId!.toLowerCase();

      // The creator hears of each call within seconds: the charge earned, not yet claimed.
      const heard = await eventually(
        () => sink.bodies.filter((b) => b.data.skill === slug),
        (b) => b.length === 3,
        'a call.paid for each channel call',
        5_000,
      );
      expect(heard.map((b) => ('chargedCumulativeAmount' in b.data ? b.data.chargedCumulativeAmount : undefined)).sort()).toEqual([
        '1000',
        '2000',
        '3000',
      ]);
      for (const b of heard) {
        expect(b).toMatchObject({
          type: 'call.paid',
          data: { version: 1, scheme: 'batch-settlement', channelId, amount: '1000', state: 'earned' },
        });
      }

      // Counted as calls at once, in the analytics and on the marketplace's card; no money counted before the claim.
      expect(await analytics(id)).toMatchObject({ callCount: 3, paidCallCount: 0, totalRevenueAtomic: '0', rejectedPaymentCount: 0 });
      const cards = await json<{ slug: string; callCount: number }[]>(await fx.request(`/skills?q=${slug}`));
      expect(cards.find((s) => s.slug === slug)).toMatchObject({ callCount: 3 });

      // The consumer's history: channel calls, the first with the channel's deposit; no transfer to check.
      const history = (await usage()).filter((r) => r.skillId === id);
      expect(history).toHaveLength(3);
      for (const record of history) {
        expect(record).toMatchObject({ scheme: 'batch-settlement', verification: 'none', verificationReason: null, paymentRef: null });
        expect(record.channel).toMatchObject({ channelId, state: 'earned', reason: null });
      }
      const deposits = history.filter((r) => r.channel?.depositTransaction);
      expect(deposits.map((r) => r.channel)).toEqual([
        {
          channelId,
          chargedCumulativeAmount: '1000',
          state: 'earned',
          reason: null,
          depositTransaction: first!.transaction!.toLowerCase(),
          depositAmountAtomic: '10000',
        },
      ]);
      // The registry's checks on chain find nothing to reject: no transfer was reported.
      await verify();
      expect(await payments(id)).toEqual([]);
      expect((await usage()).filter((r) => r.skillId === id).map((r) => r.channel?.state)).toEqual(['earned', 'earned', 'earned']);

      // The server claims and settles: the calls are claimed, then settled; revenue counts now.
      expect(await server.claimChannels(true)).toMatchObject({ channels: 1 });
      await verify();
      expect(await analytics(id)).toMatchObject({ callCount: 3, paidCallCount: 3, totalRevenueAtomic: '3000', rejectedPaymentCount: 0 });
      const after = (await usage()).filter((r) => r.skillId === id);
      expect(after.map((r) => r.channel?.state)).toEqual(['settled', 'settled', 'settled']);
      expect(after.every((r) => CHANNEL_CALL_STATES.includes(r.channel!.state))).toBe(true);
      expect(await payments(id)).toEqual([]);
    }, 120_000);

    it('tells an older client’s records for what they are: a voucher digest as a channel call, the deposit transaction as the deposit', async () => {
      const { id, slug } = await channelSkill();
      const payer = await chain.createAccount({ usdc: 1_000_000n });
      const client = market(payer, false);
      const receipts: PaymentReceipt[] = [];
      for (let i = 1; i <= 2; i++) receipts.push((await client.callWithReceipt(slug, { i })).receipt!);
      // As older clients wrote them: the transaction (the deposit's) or else the voucher's digest as the paymentRef.
      for (const receipt of receipts) {
        const old = { skillId: id, amountAtomic: receipt.amount, paymentRef: receipt.transaction ?? receipt.nonce };
        expect((await fx.request('/analytics/usage', jsonPost(old, bearer(consumerKey)))).status).toBe(200);
      }
      const channelId = receipts[0]!.channelId!.toLowerCase();
      const mine = async () => (await usage()).filter((r) => r.skillId === id);
      // Once the skill server's records are in, the voucher's digest names its call.
      const voucher = await eventually(
        async () => (await mine()).find((r) => r.paymentRef === receipts[1]!.nonce),
        (r) => r?.channel?.state === 'earned',
        'the voucher digest record shown as a channel call',
      );
      expect(voucher).toMatchObject({
        scheme: 'batch-settlement',
        verification: 'none',
        channel: { channelId, chargedCumulativeAmount: '2000' },
      });

      // The checks on chain drop both reports (neither is a transfer to the skill); the deposit shows as one.
      await verify();
      await verify();
      expect(await payments(id)).toEqual([]);
      expect(await analytics(id)).toMatchObject({ rejectedPaymentCount: 0, callCount: 2 });
      const deposit = (await mine()).find((r) => r.paymentRef === receipts[0]!.transaction);
      expect(deposit).toMatchObject({
        scheme: 'batch-settlement',
        verification: 'none',
        verificationReason: null,
        channel: { channelId, state: 'charged', depositTransaction: receipts[0]!.transaction!.toLowerCase(), depositAmountAtomic: '10000' },
      });
    }, 120_000);

    it('shows a payer what is theirs after charges, a withdrawal they started, and a fresh check', async () => {
      const { slug, payee } = await channelSkill();
      // The payer signs in with the paying wallet; its client records usage with the payer's own key.
      const payer = await chain.createAccount({ usdc: 1_000_000n });
      const session = await walletSignIn(fx.request, payer);
      const client = market(payer, true, (await createKey(fx.request, session.token, 'consumer')).key);
      for (let i = 1; i <= 2; i++) await client.call(slug, { i });
      await client.flush();
      const [known] = await client.channels();
      const mine = async () => json<ChannelView[]>(await fx.request('/analytics/channels?role=payer', { headers: bearer(session.token) }));
      // Listed from the payer's usage records and read on chain as the payer asks, before any background check.
      const read = await eventually(mine, (list) => list[0]?.chargedAtomic === '2000', 'both calls recorded for the channel');
      expect(read).toHaveLength(1);
      expect(read[0]).toMatchObject({
        receiver: payee,
        balanceAtomic: '10000',
        chargedAtomic: '2000',
        payerAtomic: '8000',
        withdrawingAtomic: '0',
        checkedAt: fx.clock.now().toISOString(),
      });

      // The payer starts the timed withdrawal of what is theirs; a later look reads it.
      await settlementTx(chain, payer, 'initiateWithdraw', [known!.config, 8000n]);
      fx.clock.advance(11);
      const later = await mine();
      expect(later[0]).toMatchObject({ payerAtomic: '8000', withdrawingAtomic: '8000', checkedAt: fx.clock.now().toISOString() });
      expect(later[0]!.withdrawInitiatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      // Within the freshness window, the stored read is answered.
      fx.clock.advance(1);
      expect((await mine())[0]!.checkedAt).toBe(later[0]!.checkedAt);
      expect(payee).toBe(known!.receiver as Address);
    }, 120_000);
  });
}
