/**
 * A listing's free trial and volume prices as the registry takes them: shown as registered, cleared
 * by a registration without them, a bad one refused 400 naming the field; a trial call record is
 * counted once, apart, and one that claims an amount is refused.
 */
import { beforeAll, describe, expect, it } from 'bun:test';
import { bearer, jsonPost } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { registryFixture } from '../support/registry';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let creator: Creator;

beforeAll(async () => {
  creator = await newCreator(fx.request);
});

describe('trials and volume prices in listings', () => {
  it('lists the trial and the steps as registered, and a registration without them clears them', async () => {
    const name = `plans-${crypto.randomUUID().slice(0, 8)}`;
    const first = await creator.register({
      name,
      price: '$0.001',
      trial: { calls: 5, period: 'week' },
      tiers: {
        period: 'month',
        steps: [
          { after: 1000, price: '$0.0008' },
          { after: 5000, price: 0.0005 },
        ],
      },
    });
    expect(first.status).toBe(201);
    expect(await json(first)).toMatchObject({
      trial: { calls: 5, period: 'week' },
      tiers: {
        period: 'month',
        steps: [
          { after: 1000, price: '$0.0008', priceAtomic: '800' },
          { after: 5000, price: '$0.0005', priceAtomic: '500' },
        ],
      },
      trialCallCount: 0,
    });
    const again = await creator.register({ name, price: '$0.001' });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ trial: null, tiers: null });
  });

  it('refuses steps that do not fall, do not grow, or a trial of no calls, naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ tiers: { period: 'month', steps: [{ after: 10, price: '$0.002' }] } }, 'tiers.steps.0.price'],
      [
        {
          tiers: {
            period: 'month',
            steps: [
              { after: 10, price: '$0.0008' },
              { after: 10, price: '$0.0005' },
            ],
          },
        },
        'tiers.steps.1.after',
      ],
      [{ tiers: { period: 'year', steps: [{ after: 10, price: '$0.0008' }] } }, 'tiers'],
      [{ trial: { calls: 0, period: 'day' } }, 'trial'],
    ];
    for (const [body, field] of cases) {
      const res = await creator.register({ price: '$0.001', ...body });
      expect(res.status).toBe(400);
      expect((await json<{ error: string }>(res)).error).toContain(field);
    }
  });

  it('counts a trial call once and apart, and refuses one that claims an amount', async () => {
    const res = await creator.register({ price: '$0.001', trial: { calls: 2, period: 'day' } });
    const { id } = await json<{ id: string }>(res);
    const record = (calls: Record<string, unknown>[]) => fx.request('/analytics/calls', jsonPost({ calls }, bearer(creator.key)));
    const trial = { skillId: id, kind: 'trial', amountAtomic: '0', paymentRef: 'a1b2c3d4e5f6a7b8' };
    const answer = await json<{ results: { status: string; reason?: string }[] }>(
      await record([trial, trial, { ...trial, paymentRef: 'ffff0000ffff0000', amountAtomic: '1000' }]),
    );
    expect(answer.results.map((r) => r.status)).toEqual(['recorded', 'duplicate', 'refused']);
    const analytics = await json<{ callCount: number; paidCallCount: number; trialCallCount: number; totalRevenueAtomic: string }>(
      await fx.request(`/analytics/${id}`, { headers: bearer(creator.key) }),
    );
    expect(analytics).toMatchObject({ callCount: 0, paidCallCount: 0, trialCallCount: 1, totalRevenueAtomic: '0' });
  });
});
