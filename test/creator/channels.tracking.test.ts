/**
 * Call tracking of channel calls: the record names the channel and its cumulative charge after the
 * call (`channelId`, `chargedCumulativeAmount`) instead of a transaction, keeps the charged
 * amount in atomic units (`amountAtomic`), and the registry's call contract takes it, and the older
 * decimal `amount` too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { RegistryClient } from 'skill-market/registry';
import { channelCalls } from '../../src/db/schema';
import { createCallTracker } from '../../sdk/creator/tracker';
import { bearer, jsonPost } from '../support/auth';
import { type Creator, newCreator } from '../support/catalogue';
import { registryFixture } from '../support/registry';
import { recordingLogger } from '../support/skill-server';

const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
let creator: Creator;
let front: ReturnType<typeof Bun.serve>;
const bodies: unknown[] = [];
const statuses: number[] = [];

beforeAll(async () => {
  creator = await newCreator(fx.request);
  front = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      const url = new URL(request.url);
      const body = request.method === 'POST' ? await request.clone().json() : undefined;
      const answer = await fx.registry.app.handle(new Request(`http://localhost${url.pathname}${url.search}`, request));
      if (url.pathname.startsWith('/analytics/call')) {
        bodies.push(body);
        statuses.push(answer.status);
      }
      return answer;
    },
  });
});

afterAll(() => front?.stop(true));

describe('tracking a channel call', () => {
  it('sends channelId and chargedCumulativeAmount with the atomic amount, and no paymentRef', async () => {
    const res = await creator.register({ name: 'metered', endpoint: 'http://127.0.0.1:9/metered', price: '$0.0004' });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const logger = recordingLogger();
    const tracker = createCallTracker(new RegistryClient({ apiUrl: `http://127.0.0.1:${front.port}`, apiKey: creator.key }), logger, {
      batchDelayMs: 0,
    });
    tracker.remember('metered', id);
    const channelId = `0x${'ab'.repeat(32)}`;
    tracker.track({
      skill: 'metered',
      scheme: 'batch-settlement',
      amount: '0.0004',
      amountAtomic: '400',
      payer: '0x000000000000000000000000000000000000bEEF',
      transaction: '',
      nonce: '',
      network: 'eip155:84532',
      channelId,
      chargedCumulativeAmount: '2400',
    });
    expect(await tracker.flush(10_000)).toBe(true);
    tracker.stop();
    expect(bodies).toEqual([{ calls: [{ skillId: id, amountAtomic: '400', channelId, chargedCumulativeAmount: '2400' }] }]);
    expect(statuses).toEqual([200]);
    expect(logger.lines.filter((l) => l.startsWith('warn'))).toEqual([]);
    const [row] = await fx.database.db.select().from(channelCalls).where(eq(channelCalls.channelId, channelId));
    expect(row?.amount).toBe(400n);
  });

  it('takes the older decimal amount of a channel call and stores it in atomic units', async () => {
    const res = await creator.register({ name: 'metered-old', endpoint: 'http://127.0.0.1:9/metered-old', price: '$0.0004' });
    const { id } = (await res.json()) as { id: string };
    const channelId = `0x${'cd'.repeat(32)}`;
    const answer = await fx.request(
      '/analytics/calls',
      jsonPost({ calls: [{ skillId: id, amount: '0.0004', channelId, chargedCumulativeAmount: '400' }] }, bearer(creator.key)),
    );
    expect(await answer.json()).toEqual({ success: true, recorded: 1, results: [{ status: 'recorded' }] });
    const [row] = await fx.database.db.select().from(channelCalls).where(eq(channelCalls.channelId, channelId));
    expect(row?.amount).toBe(400n);
  });
});
