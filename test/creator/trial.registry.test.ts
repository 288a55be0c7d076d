/**
 * Free trials end to end: the registration carries the trial to the listing, a consumer's
 * SkillMarket takes the free calls by signing the 402's sign-in and then pays, and the registry
 * counts the trial calls apart (trialCallCount) from calls, paid calls and revenue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { SkillMarket } from 'skill-market';
import type { SkillView } from 'skill-market/registry';
import { register, serve, skill, type SkillServer } from 'skill-market/creator';
import type { PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { bearer } from '../support/auth';
import { json, type Creator } from '../support/catalogue';
import { registryFixture } from '../support/registry';
import { type CreatorStack, startCreatorStack } from '../support/creator-stack';
import { loopbackServeOptions, type PaymentStack } from '../support/skill-server';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let stack: PaymentStack;
let creator: Creator;
let payee: Address;
let verifier: PaymentVerifier;
let server: SkillServer;
let world: CreatorStack;
let apiUrl: string;
let folder: string;
let slug: string;
let skillId: string;

const skills = {
  haiku: skill({ price: '$0.002', trial: { calls: 2, period: 'week' }, groups: ['tools'] }, (input: { topic: string }) => ({
    poem: `${input.topic} / falls / quietly`,
  })),
};

beforeAll(async () => {
  world = await startCreatorStack(fx);
  ({ stack, creator, payee, verifier, apiUrl } = world);
  folder = await mkdtemp(join(tmpdir(), 'trials-registry-'));
  server = await serve(
    skills,
    loopbackServeOptions(stack.chain, stack.facilitatorUrl, payee, {
      apiKey: creator.key,
      apiUrl,
      trackCalls: { baseDelayMs: 50, maxDelayMs: 200 },
      trials: { store: join(folder, 'trials') },
      channels: { store: join(folder, 'channels') },
    }),
  );
  const [registered] = await register(skills, {
    apiKey: creator.key,
    apiUrl,
    paymentAddress: payee,
    endpoint: server.url,
    network: stack.chain.network,
  });
  if (!registered?.skillId || !registered.slug) throw new Error(`register: ${JSON.stringify(registered)}`);
  skillId = registered.skillId;
  slug = registered.slug;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await world?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

const listing = async () => json<SkillView>(await fx.request(`/skills/${slug}`));
const analytics = async () =>
  json<{ callCount: number; paidCallCount: number; trialCallCount: number; totalRevenueAtomic: string }>(
    await fx.request(`/analytics/${skillId}`, { headers: bearer(creator.key) }),
  );

describe('free trials in the marketplace', () => {
  it('shows the trial on the listing', async () => {
    expect((await listing()).trial).toEqual({ calls: 2, period: 'week' });
  });

  it('lets SkillMarket take the free calls, then pay, and counts the trial calls apart from paid calls and revenue', async () => {
    const payer = await stack.chain.createAccount({ usdc: 100_000n });
    const market = new SkillMarket({
      apiUrl,
      wallet: payer.privateKey,
      network: stack.chain.network,
      assets: [{ network: stack.chain.network, address: stack.chain.token.address }],
      payment: 'exact',
    });
    const first = await market.callWithReceipt(slug, { topic: 'snow' });
    expect(first).toMatchObject({ trial: true, trialCallsLeft: 1, receipt: null, result: { poem: 'snow / falls / quietly' } });
    expect(await market.callWithReceipt(slug, { topic: 'rain' })).toMatchObject({ trial: true, trialCallsLeft: 0 });
    const paid = await market.callWithReceipt(slug, { topic: 'leaves' });
    expect(paid.trial).toBeUndefined();
    expect(paid.receipt?.amount).toBe('2000');
    expect(await stack.chain.balanceOf(payer.address)).toBe(100_000n - 2_000n);
    // Without trials the client pays at once, and a fresh wallet asks for its own free calls.
    const skipped = await market.callWithReceipt(slug, { topic: 'wind' }, { trial: false });
    expect(skipped.receipt).not.toBeNull();

    expect(await server.flushCalls()).toBe(true);
    await verifier.verifyNow();
    const counted = await analytics();
    expect(counted).toMatchObject({ trialCallCount: 2, paidCallCount: 2, callCount: 2, totalRevenueAtomic: '4000' });
    expect((await listing()).trialCallCount).toBe(2);
  });

  it('skips the trial when asked not to use one', async () => {
    const payer = await stack.chain.createAccount({ usdc: 10_000n });
    const market = new SkillMarket({
      apiUrl,
      wallet: payer.privateKey,
      network: stack.chain.network,
      assets: [{ network: stack.chain.network, address: stack.chain.token.address }],
      payment: 'exact',
    });
    const result = await market.callWithReceipt(slug, { topic: 'fog' }, { trial: false });
    expect(result.trial).toBeUndefined();
    expect(await stack.chain.balanceOf(payer.address)).toBe(10_000n - 2_000n);
  });
});
