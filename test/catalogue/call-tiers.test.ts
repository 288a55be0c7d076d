/**
 * The volume price tier a call record names, as the registry keeps it: where the listing allows
 * the record's amount at that tier (exactly the tier's price for a transfer of the price, at most it
 * for a metered charge or a channel call), else unknown; never a reason to refuse the call. A skill
 * without volume prices keeps no tier and its analytics show none.
 */
import { beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { channelCalls, skillCalls } from '../../src/db/schema';
import { bearer, jsonPost } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { registryFixture } from '../support/registry';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let creator: Creator;
let tiered: string;
let plain: string;

const hash = () => `0x${crypto.randomUUID().replaceAll('-', '').padEnd(64, '0')}`;

beforeAll(async () => {
  creator = await newCreator(fx.request);
  const register = async (overrides: Record<string, unknown>) => {
    const res = await creator.register({ name: `tiers-${crypto.randomUUID().slice(0, 8)}`, price: '$0.001', ...overrides });
    expect(res.status).toBe(201);
    return (await json<{ id: string }>(res)).id;
  };
  tiered = await register({
    tiers: {
      period: 'month',
      steps: [
        { after: 100, price: '$0.0008' },
        { after: 1000, price: '$0.0005' },
      ],
    },
  });
  plain = await register({});
});

/** Records one call of `skillId` and answers the tier kept for it. */
async function keptTier(skillId: string, call: { amountAtomic: string; tier?: number; exact?: boolean; channel?: boolean }) {
  const paymentRef = hash();
  const body = call.channel
    ? { skillId, amountAtomic: call.amountAtomic, channelId: hash(), chargedCumulativeAmount: call.amountAtomic, tier: call.tier }
    : { skillId, amountAtomic: call.amountAtomic, paymentRef, ...(call.exact ? { paymentNonce: hash() } : {}), tier: call.tier };
  const res = await fx.request('/analytics/calls', jsonPost({ calls: [body] }, bearer(creator.key)));
  expect(await json(res)).toEqual({ success: true, recorded: 1, results: [{ status: 'recorded' }] });
  if (call.channel) {
    const [row] = await fx.database.db
      .select({ tier: channelCalls.tierAfter })
      .from(channelCalls)
      .where(eq(channelCalls.channelId, body.channelId as string));
    return row!.tier;
  }
  const [row] = await fx.database.db.select({ tier: skillCalls.tierAfter }).from(skillCalls).where(eq(skillCalls.paymentRef, paymentRef));
  return row!.tier;
}

describe('the tier of a call record', () => {
  it('keeps a transfer’s tier only at exactly that tier’s price (the base at the price)', async () => {
    expect(await keptTier(tiered, { amountAtomic: '800', tier: 100, exact: true })).toBe(100);
    expect(await keptTier(tiered, { amountAtomic: '500', tier: 1000, exact: true })).toBe(1000);
    expect(await keptTier(tiered, { amountAtomic: '1000', tier: 0, exact: true })).toBe(0);
    expect(await keptTier(tiered, { amountAtomic: '1000', tier: 100, exact: true })).toBeNull();
    expect(await keptTier(tiered, { amountAtomic: '800', tier: 0, exact: true })).toBeNull();
  });

  it('keeps a metered charge’s tier at most that tier’s price, and a channel call’s alike', async () => {
    expect(await keptTier(tiered, { amountAtomic: '300', tier: 100 })).toBe(100);
    expect(await keptTier(tiered, { amountAtomic: '900', tier: 100 })).toBeNull();
    expect(await keptTier(tiered, { amountAtomic: '1000', tier: 0 })).toBe(0);
    expect(await keptTier(tiered, { amountAtomic: '500', tier: 1000, channel: true })).toBe(1000);
    expect(await keptTier(tiered, { amountAtomic: '700', tier: 1000, channel: true })).toBeNull();
  });

  it('keeps no tier the listing does not have, none unsaid, and none for a skill without volume prices', async () => {
    expect(await keptTier(tiered, { amountAtomic: '800', tier: 50, exact: true })).toBeNull();
    expect(await keptTier(tiered, { amountAtomic: '800', exact: true })).toBeNull();
    expect(await keptTier(plain, { amountAtomic: '1000', tier: 0, exact: true })).toBeNull();
  });

  it('refuses a tier that is not a whole number, naming the field', async () => {
    const res = await fx.request(
      '/analytics/calls',
      jsonPost({ calls: [{ skillId: tiered, amountAtomic: '800', paymentRef: hash(), tier: -1 }] }, bearer(creator.key)),
    );
    expect(res.status).toBe(400);
    expect((await json<{ error: string }>(res)).error).toContain('tier');
  });

  it('shows the listed tiers with no calls yet for a skill with volume prices, and no tiers for one without', async () => {
    const analytics = async (id: string) => json<{ tiers: unknown }>(await fx.request(`/analytics/${id}`));
    expect((await analytics(tiered)).tiers).toEqual([
      { after: 0, priceAtomic: '1000', calls: 0, revenueAtomic: '0' },
      { after: 100, priceAtomic: '800', calls: 0, revenueAtomic: '0' },
      { after: 1000, priceAtomic: '500', calls: 0, revenueAtomic: '0' },
    ]);
    expect((await analytics(plain)).tiers).toBeNull();
  });
});
