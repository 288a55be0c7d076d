/**
 * Which route call tracking uses: until the registry has answered a first batch, one request is in
 * flight, so a registry without the batch route (404) is asked for it once and gets every record
 * one by one, none lost to batches that were already on their way; a registry that takes batches
 * gets several requests at once from then on.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { RegistryClient } from 'skill-market/registry';
import { createCallTracker } from '../../sdk/creator/tracker';
import { recordingLogger } from '../support/skill-server';

const SKILL_ID = '00000000-0000-4000-8000-000000000001';
const servers: ReturnType<typeof Bun.serve>[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

/** A registry that answers after `delayMs`: with or without the batch route; counts requests and the most at once. */
function fakeRegistry({ batches }: { batches: boolean }, delayMs = 50) {
  const seen = { batch: 0, single: 0, records: 0, inFlight: 0, mostInFlight: 0 };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      const { pathname } = new URL(request.url);
      const body = (await request.json()) as { calls?: unknown[] };
      seen.inFlight++;
      seen.mostInFlight = Math.max(seen.mostInFlight, seen.inFlight);
      await Bun.sleep(delayMs);
      seen.inFlight--;
      if (pathname === '/analytics/calls') {
        seen.batch++;
        if (!batches) return Response.json({ error: 'Not found', code: 'NOT_FOUND', requestId: 'r' }, { status: 404 });
        const calls = body.calls ?? [];
        seen.records += calls.length;
        return Response.json({ success: true, recorded: calls.length, results: calls.map(() => ({ status: 'recorded' })) });
      }
      seen.single++;
      seen.records++;
      return Response.json({ success: true, recorded: true });
    },
  });
  servers.push(server);
  return { seen, client: new RegistryClient({ apiUrl: `http://127.0.0.1:${server.port}`, apiKey: 'mk_test' }) };
}

const call = (i: number) => ({
  skill: 'tracked',
  scheme: 'exact',
  amount: '0.001',
  amountAtomic: '1000',
  payer: '0x000000000000000000000000000000000000bEEF',
  transaction: `0x${i.toString(16).padStart(64, '0')}`,
  nonce: `0x${(i + 1).toString(16).padStart(64, '0')}`,
  network: 'eip155:84532',
});

describe('the route of call tracking', () => {
  it('asks a registry without the batch route once, then sends every record alone, losing none', async () => {
    const { seen, client } = fakeRegistry({ batches: false });
    const logger = recordingLogger();
    const tracker = createCallTracker(client, logger, { batchDelayMs: 0, concurrency: 4 });
    tracker.remember('tracked', SKILL_ID);
    for (let i = 0; i < 40; i++) tracker.track(call(i));
    expect(await tracker.flush(20_000)).toBe(true);
    tracker.stop();
    expect(seen).toMatchObject({ batch: 1, single: 40, records: 40 });
    expect(logger.lines.filter((l) => l.startsWith('warn'))).toEqual([]);
  });

  it('sends batches side by side once the registry has taken one', async () => {
    const { seen, client } = fakeRegistry({ batches: true });
    const tracker = createCallTracker(client, recordingLogger(), { batchDelayMs: 0, batchSize: 5, concurrency: 4 });
    tracker.remember('tracked', SKILL_ID);
    tracker.track(call(0));
    expect(await tracker.flush(20_000)).toBe(true);
    for (let i = 1; i <= 40; i++) tracker.track(call(i));
    expect(await tracker.flush(20_000)).toBe(true);
    tracker.stop();
    expect(seen.records).toBe(41);
    expect(seen.mostInFlight).toBe(4);
  });
});
