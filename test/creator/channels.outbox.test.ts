/**
 * The durable outbox of channel call records: a channel keeps each call's record (as runs of
 * consecutive calls of one skill at one charge) until call tracking says the registry has it, and
 * drops acknowledged records at its next write, whatever order the acknowledgements came in. Call
 * tracking never drops a kept record for its attempts or the queue's size, sends it once however
 * often it is tracked, and says when the registry answered for it (recorded, duplicate or refused).
 * A channel with nothing left to claim is written by the claim rounds only to drop delivered records.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { RegistryClient } from 'skill-market/registry';
import { type ChannelState, memoryChannelStore, type SettledCall } from 'skill-market/creator';
import type { FacilitatorClient } from '../../sdk/creator/facilitator-client';
import { createClaimer } from '../../sdk/creator/schemes/channel/claims';
import { createCallOutbox } from '../../sdk/creator/schemes/channel/outbox';
import { channelSettings, type ChannelRequirements } from '../../sdk/creator/schemes/channel/settings';
import { createCallTracker } from '../../sdk/creator/tracker';
import { eventually } from '../support/eventually';
import { recordingLogger } from '../support/skill-server';

const CHANNEL = `0x${'ab'.repeat(32)}`;
const state = (unreported?: ChannelState['unreported']) => ({ channelId: CHANNEL, unreported }) as unknown as ChannelState;

describe('the outbox of a channel', () => {
  it('keeps consecutive calls of one skill at one charge as one run, and a change of either as a new one', () => {
    const outbox = createCallOutbox(true);
    let s = state();
    for (const [skill, amount, cumulative] of [
      ['a', 10n, 10n],
      ['a', 10n, 20n],
      ['a', 10n, 30n],
      ['b', 10n, 40n],
      ['b', 4n, 44n],
    ] as const)
      s = state(outbox.add(s, { skill, amount, cumulative }));
    expect(s.unreported).toEqual([
      { skill: 'a', amount: '10', first: '10', count: 3 },
      { skill: 'b', amount: '10', first: '40', count: 1 },
      { skill: 'b', amount: '4', first: '44', count: 1 },
    ]);
    expect(outbox.records(s).map((r) => `${r.skill}:${r.amount}:${r.cumulative}`)).toEqual([
      'a:10:10',
      'a:10:20',
      'a:10:30',
      'b:10:40',
      'b:4:44',
    ]);
  });

  it('drops the records the registry has at the next write, cutting a run around them in any order', () => {
    const outbox = createCallOutbox(true);
    let s = state([{ skill: 'a', amount: '10', first: '10', count: 5 }]);
    outbox.acknowledge(CHANNEL, '30');
    outbox.acknowledge(CHANNEL.toUpperCase().replace('0X', '0x'), '10');
    s = state(outbox.add(s, { skill: 'a', amount: 10n, cumulative: 60n }));
    expect(s.unreported).toEqual([
      { skill: 'a', amount: '10', first: '20', count: 1 },
      { skill: 'a', amount: '10', first: '40', count: 3 },
    ]);
    for (const c of ['20', '40', '50', '60']) outbox.acknowledge(CHANNEL, c);
    expect(outbox.trim(s)).toBeUndefined();
    // A record of no charge is none; without call tracking nothing is kept, and what was kept goes.
    expect(outbox.add(state(), { skill: 'a', amount: 0n, cumulative: 60n })).toBeUndefined();
    expect(createCallOutbox(false).add(s, { skill: 'a', amount: 10n, cumulative: 70n })).toBeUndefined();
  });
});

describe('the claim rounds', () => {
  it('write a channel with nothing to claim only to drop the records the registry has', async () => {
    const store = memoryChannelStore();
    const claimed = { ...state([{ skill: 'a', amount: '10', first: '10', count: 2 }]), chargedCumulativeAmount: '20', totalClaimed: '20' };
    await store.update(CHANNEL as `0x${string}`, async () => ({ next: claimed, value: undefined }));
    const outbox = createCallOutbox(true);
    const sent: string[] = [];
    const claimer = createClaimer({
      store,
      facilitator: {
        forward: async (_path: string, body: { payload: { type: string } }) => {
          sent.push(body.payload.type);
          return { success: false, errorReason: 'invalid_batch_settlement_evm_nothing_to_settle' };
        },
      } as unknown as FacilitatorClient,
      settings: channelSettings({ claimIntervalMs: 3_600_000 }, 6)!,
      chainId: 31337,
      requirements: () => ({}) as ChannelRequirements,
      logger: recordingLogger(),
      outbox,
    });
    try {
      await claimer.run(false);
      expect((await store.get(CHANNEL as `0x${string}`))?.unreported).toHaveLength(1);
      outbox.acknowledge(CHANNEL, '10');
      outbox.acknowledge(CHANNEL, '20');
      await claimer.run(false);
      expect((await store.get(CHANNEL as `0x${string}`))?.unreported).toBeUndefined();
      // Nothing was claimed (the one settle looks for claims an earlier run left).
      expect(sent).toEqual(['settle']);
    } finally {
      claimer.stop();
    }
  });
});

const servers: ReturnType<typeof Bun.serve>[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

/** A registry answering each batch's records with `answer(record)`, or 503 while `down`. */
function registry(answer: (record: Record<string, unknown>) => Record<string, unknown>) {
  const seen = { requests: 0, records: [] as Record<string, unknown>[], down: true };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      seen.requests++;
      if (seen.down) return Response.json({ error: 'Service unavailable', code: 'UNAVAILABLE', requestId: 'r' }, { status: 503 });
      const { calls } = (await request.json()) as { calls: Record<string, unknown>[] };
      seen.records.push(...calls);
      return Response.json({ success: true, recorded: calls.length, results: calls.map(answer) });
    },
  });
  servers.push(server);
  return { seen, client: new RegistryClient({ apiUrl: `http://127.0.0.1:${server.port}`, apiKey: 'mk_test', retry: { attempts: 1 } }) };
}

const channelCall = (cumulative: number): SettledCall => ({
  skill: 'metered',
  scheme: 'batch-settlement',
  amount: '0.001',
  amountAtomic: '1000',
  payer: '0x000000000000000000000000000000000000bEEF',
  transaction: '',
  nonce: '',
  network: 'eip155:84532',
  channelId: CHANNEL,
  chargedCumulativeAmount: String(cumulative),
});

describe('call tracking of kept records', () => {
  it('retries a kept record past maxAttempts and a full queue, sends it once, and says when the registry answered for it', async () => {
    const { seen, client } = registry((record) =>
      record.chargedCumulativeAmount === '2000'
        ? { status: 'duplicate' }
        : record.chargedCumulativeAmount === '3000'
          ? { status: 'refused', reason: 'invalid-amount', message: 'no' }
          : { status: 'recorded' },
    );
    const delivered: string[] = [];
    const logger = recordingLogger();
    const tracker = createCallTracker(
      client,
      logger,
      { batchDelayMs: 0, baseDelayMs: 10, maxDelayMs: 20, maxAttempts: 2, maxQueue: 2 },
      { kept: (call) => call.channelId !== undefined, delivered: (call) => delivered.push(call.chargedCumulativeAmount!) },
    );
    tracker.remember('metered', '00000000-0000-4000-8000-000000000001');
    for (const c of [1000, 2000, 3000, 1000, 2000]) tracker.track(channelCall(c));
    expect(tracker.pending()).toBe(3);
    // Well past two attempts each, nothing is dropped.
    await eventually(
      () => seen.requests,
      (n) => n >= 6,
      'six refused deliveries',
    );
    expect(tracker.pending()).toBe(3);
    expect(delivered).toEqual([]);
    seen.down = false;
    expect(await tracker.flush(10_000)).toBe(true);
    expect(delivered.sort()).toEqual(['1000', '2000', '3000']);
    expect(seen.records.map((r) => r.chargedCumulativeAmount).sort()).toEqual(['1000', '2000', '3000']);
    expect(logger.has('warn', 'call record not delivered after 2 attempts; kept, and tried again')).toBe(true);
    expect(logger.has('warn', 'dropped after')).toBe(false);
    expect(logger.has('warn', 'oldest record dropped')).toBe(false);
    // Delivered, a record may be tracked again (sent after a restart): it goes again, and counts once at the registry.
    tracker.track(channelCall(1000));
    expect(await tracker.flush(10_000)).toBe(true);
    expect(delivered).toHaveLength(4);
    tracker.stop();
  });
});
