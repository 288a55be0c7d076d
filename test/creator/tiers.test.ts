/**
 * Volume prices on anvil: a skill with `tiers` (3 paid calls, then $0.0006 instead of $0.001)
 * charges a payer its tier price once it paid for 3 calls, over a payment channel (the voucher's
 * charge) and over `upto` (the settlement); balances move by exactly the charges, and the
 * registry's revenue equals what the chain moved, split by the tier that priced each call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { Address } from 'viem';
import { SkillMarket } from 'skill-market';
import { register, serve, skill, type SkillServer } from 'skill-market/creator';
import type { SkillView } from 'skill-market/registry';
import type { PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { bearer, jsonPost } from '../support/auth';
import { json, type Creator } from '../support/catalogue';
import { approvePermit2 } from '../support/chain/upto';
import { registryFixture } from '../support/registry';
import { type CreatorStack, startCreatorStack } from '../support/creator-stack';
import { loopbackServeOptions, paidPost, postJson, type PaymentStack } from '../support/skill-server';
import { trialHeader } from '../support/trial';
import { decodePaymentRequired, encodePaymentPayload, parsePaymentRequirements, signAuthorization } from 'skill-market/x402';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let stack: PaymentStack;
let creator: Creator;
let payee: Address;
let verifier: PaymentVerifier;
let server: SkillServer;
let world: CreatorStack;
let apiUrl: string;
let folder: string;
const ids: Record<string, { id: string; slug: string }> = {};

const tiers = [{ after: 3, price: '$0.0006' }];
const skills = {
  metered: skill({ price: '$0.001', upto: true, tiers, tierPeriod: 'day', groups: ['tools'] }, (input: { i: number }) => input),
  stream: skill({ price: '$0.001', channels: true, tiers, tierPeriod: 'day', groups: ['tools'] }, (input: { i: number }) => input),
  single: skill({ price: '$0.001', channels: false, tiers, tierPeriod: 'day', groups: ['tools'] }, (input: { i: number }) => input),
};
/** What 5 calls of one payer cost: 3 at the price, then 2 at the tier price. */
const FIVE_CALLS = 3n * 1_000n + 2n * 600n;

beforeAll(async () => {
  world = await startCreatorStack(fx);
  ({ stack, creator, payee, verifier, apiUrl } = world);
  folder = await mkdtemp(join(tmpdir(), 'tiers-'));
  server = await serve(
    skills,
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      apiKey: creator.key,
      apiUrl,
      trackCalls: { baseDelayMs: 50, maxDelayMs: 200 },
      trials: { store: join(folder, 'plans') },
      channels: { store: join(folder, 'channels'), claimAbove: '$100', claimWithinMs: 600_000 },
    }),
  );
  const registered = await register(skills, {
    apiKey: creator.key,
    apiUrl,
    paymentAddress: payee,
    endpoint: server.url,
    network: stack.chain.network,
  });
  for (const r of registered) {
    if (!r.skillId || !r.slug) throw new Error(`register: ${JSON.stringify(r)}`);
    ids[r.name] = { id: r.skillId, slug: r.slug };
  }
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await world?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

const revenue = async (name: string) => {
  const body = await json<{ totalRevenueAtomic: string; paidCallCount: number }>(
    await fx.request(`/analytics/${ids[name]!.id}`, { headers: bearer(creator.key) }),
  );
  return body;
};

/** The skill's paid calls and revenue per tier, as its analytics split them. */
const byTier = async (name: string) =>
  (
    await json<{ tiers: { after: number | null; priceAtomic: string | null; calls: number; revenueAtomic: string }[] | null }>(
      await fx.request(`/analytics/${ids[name]!.id}`),
    )
  ).tiers;

/** The skill's paid calls and revenue by how they were paid. */
const bySchemes = async (name: string) =>
  (await json<{ schemes: Record<string, { calls: number; revenueAtomic: string }> }>(await fx.request(`/analytics/${ids[name]!.id}`)))
    .schemes;
const none = { calls: 0, revenueAtomic: '0' };
const five = { calls: 5, revenueAtomic: FIVE_CALLS.toString() };

/** Three calls at the price, then two at the tier price: what 5 calls of one payer split into. */
const FIVE_BY_TIER = [
  { after: 0, priceAtomic: '1000', calls: 3, revenueAtomic: '3000' },
  { after: 3, priceAtomic: '600', calls: 2, revenueAtomic: '1200' },
];

describe('volume prices', () => {
  it('lists the volume prices with the skill', async () => {
    const listing = await json<SkillView>(await fx.request(`/skills/${ids.stream!.slug}`));
    expect(listing.tiers).toEqual({ period: 'day', steps: [{ after: 3, price: '$0.0006', priceAtomic: '600' }] });
  });

  it('settles the tier price on upto after the threshold, and the registry counts what the chain moved', async () => {
    const payer = await stack.chain.createAccount({ usdc: 100_000n });
    await approvePermit2(stack.chain, payer);
    const client = new x402Client().register(stack.chain.network, new UptoEvmScheme(payer));
    client.setSpendControls({ allowedAssets: [{ network: stack.chain.network, asset: stack.chain.token.address }] });
    const pay = wrapFetchWithPayment(fetch, client);
    const payeeBefore = await stack.chain.balanceOf(payee);
    for (let i = 1; i <= 5; i++) expect((await pay(`${server.url}/metered`, jsonPost({ i }))).status).toBe(200);
    expect(await stack.chain.balanceOf(payer.address)).toBe(100_000n - FIVE_CALLS);
    expect((await stack.chain.balanceOf(payee)) - payeeBefore).toBe(FIVE_CALLS);
    expect(await server.flushCalls()).toBe(true);
    await verifier.verifyNow();
    expect(await revenue('metered')).toMatchObject({ paidCallCount: 5, totalRevenueAtomic: FIVE_CALLS.toString() });
    expect(await byTier('metered')).toEqual(FIVE_BY_TIER);
    expect(await bySchemes('metered')).toEqual({ exact: none, upto: five, batchSettlement: none });
  });

  it('charges the tier price in the channel voucher after the threshold; the claim pays exactly the charges', async () => {
    const payer = await stack.chain.createAccount({ usdc: 1_000_000n });
    const market = new SkillMarket({
      apiUrl,
      wallet: payer.privateKey,
      network: stack.chain.network,
      assets: [{ network: stack.chain.network, address: stack.chain.token.address }],
      payment: 'channel',
      maxDeposit: '$0.1',
    });
    const charges: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const { result, receipt } = await market.callWithReceipt(ids.stream!.slug, { i });
      expect(result).toEqual({ i });
      charges.push(receipt!.amount);
    }
    expect(charges).toEqual(['1000', '1000', '1000', '600', '600']);
    const [channel] = await market.channels();
    expect(channel?.charged).toBe(FIVE_CALLS.toString());
    const payeeBefore = await stack.chain.balanceOf(payee);
    expect(await server.claimChannels(true)).toMatchObject({ channels: 1 });
    expect((await stack.chain.balanceOf(payee)) - payeeBefore).toBe(FIVE_CALLS);
    expect(await server.flushCalls()).toBe(true);
    fx.clock.advance(3601);
    await verifier.verifyNow();
    expect(await revenue('stream')).toMatchObject({ paidCallCount: 5, totalRevenueAtomic: FIVE_CALLS.toString() });
    expect(await byTier('stream')).toEqual(FIVE_BY_TIER);
    expect(await bySchemes('stream')).toEqual({ exact: none, upto: none, batchSettlement: five });
  });

  it('quotes a signed-in payer its tier price in the 402 and takes an exact payment of it (unsigned: the base price); the registry counts it', async () => {
    const payer = await stack.chain.createAccount({ usdc: 100_000n });
    const url = `${server.url}/single`;
    for (let i = 1; i <= 3; i++) expect((await paidPost(url, { i }, payer)).status).toBe(200);
    const unsigned = decodePaymentRequired((await postJson(url, { i: 4 })).headers.get('PAYMENT-REQUIRED')!);
    expect(unsigned.accepts.map((a) => a.amount)).toEqual(['1000']);

    const signed = await postJson(url, { i: 4 }, { 'SIGN-IN-WITH-X': await trialHeader(url, payer) });
    expect(signed.status).toBe(402);
    const quote = decodePaymentRequired(signed.headers.get('PAYMENT-REQUIRED')!);
    expect(quote.accepts.map((a) => a.amount)).toEqual(['600']);
    const payment = await signAuthorization(payer, parsePaymentRequirements(quote.accepts[0]), { resource: quote.resource });
    const before = await stack.chain.balanceOf(payer.address);
    const paid = await postJson(url, { i: 4 }, { 'X-Payment': encodePaymentPayload(payment) });
    expect(paid.status).toBe(200);
    expect(before - (await stack.chain.balanceOf(payer.address))).toBe(600n);

    // Another payer cannot pay the tier price it was not quoted.
    const stranger = await stack.chain.createAccount({ usdc: 100_000n });
    const forged = await signAuthorization(stranger, parsePaymentRequirements(quote.accepts[0]), { resource: quote.resource });
    expect((await postJson(url, { i: 5 }, { 'X-Payment': encodePaymentPayload(forged) })).status).toBe(402);
    expect(await stack.chain.balanceOf(stranger.address)).toBe(100_000n);
    expect(await server.flushCalls()).toBe(true);
    await verifier.verifyNow();
    expect(await revenue('single')).toMatchObject({ paidCallCount: 4, totalRevenueAtomic: (3n * 1_000n + 600n).toString() });
    expect(await byTier('single')).toEqual([
      { after: 0, priceAtomic: '1000', calls: 3, revenueAtomic: '3000' },
      { after: 3, priceAtomic: '600', calls: 1, revenueAtomic: '600' },
    ]);
  });

  it('lets SkillMarket paying exact sign in for its quote and pay its tier price after the threshold; the registry counts each call at its tier', async () => {
    const payer = await stack.chain.createAccount({ usdc: 100_000n });
    const market = new SkillMarket({
      apiUrl,
      wallet: payer.privateKey,
      network: stack.chain.network,
      assets: [{ network: stack.chain.network, address: stack.chain.token.address }],
      payment: 'exact',
    });
    const charges: string[] = [];
    for (let i = 1; i <= 5; i++) charges.push((await market.callWithReceipt(ids.single!.slug, { i })).receipt!.amount);
    expect(charges).toEqual(['1000', '1000', '1000', '600', '600']);
    expect(await stack.chain.balanceOf(payer.address)).toBe(100_000n - FIVE_CALLS);
    expect(await server.flushCalls()).toBe(true);
    await verifier.verifyNow();
    expect(await byTier('single')).toEqual([
      { after: 0, priceAtomic: '1000', calls: 6, revenueAtomic: '6000' },
      { after: 3, priceAtomic: '600', calls: 3, revenueAtomic: '1800' },
    ]);
    expect(await bySchemes('single')).toEqual({ exact: { calls: 9, revenueAtomic: '7800' }, upto: none, batchSettlement: none });
  });
});
