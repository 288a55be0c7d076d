/**
 * A webhook receiver cannot hold the registry up. A real `market registry` process sends in the
 * background, on each database: a receiver answering a 200 MB body (streamed for real, as fast as
 * it is read) costs the registry less than 10 MB of peak memory, and the receiver sees the
 * registry stop reading after the first chunks; while 30 endpoints of 3 accounts that never answer
 * hold every place their accounts may take, another account's deliveries arrive. (The per-endpoint
 * and per-account limits themselves: limits.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READ_LIMIT_BYTES } from '../../src/registry/modules/webhooks';
import { bearer, walletSignIn } from '../support/auth';
import { json } from '../support/catalogue';
import { databaseKinds, processDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort, startMarket, waitForJson, type MarketProcess } from '../support/process';
import { addEndpoint, hangingReceiver, healthyReceiver, sendTest, webhookReceiver } from '../support/webhooks';

const MB = 1024 * 1024;
const FLOOD_BYTES = 200 * MB;
const CHUNK = 64 * 1024;

type Request = (path: string, init?: RequestInit) => Promise<Response>;

/** Answers its first delivery "ok" (a warm-up), then each one a 200 MB body produced only as fast as it is read. */
function floodReceiver() {
  const state = { deliveries: 0, sent: 0, cancelled: false, finished: false };
  const receiver = webhookReceiver(async (request) => {
    await request.text();
    if (state.deliveries++ === 0) return new Response('ok');
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (state.sent >= FLOOD_BYTES) {
            state.finished = true;
            return controller.close();
          }
          controller.enqueue(new Uint8Array(CHUNK).fill(0x61)); // "aaaa…"
          state.sent += CHUNK;
        },
        cancel() {
          state.cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { headers: { 'content-type': 'text/plain' } });
  });
  return { ...receiver, state };
}

/** A process's resident memory now and its peak since the last reset, in bytes (Linux /proc). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}
/** Starts the peak of `pid` again from its resident memory now. */
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

for (const kind of databaseKinds) {
  describe(`a registry process sending webhooks on ${kind}`, () => {
    const work = mkdtempSync(join(tmpdir(), 'webhooks-bounded-'));
    let registry: MarketProcess;
    let drop: (() => Promise<void>) | undefined;
    let base = '';
    const request: Request = (path, init) => fetch(`${base}${path}`, init);
    const context = () => `--- registry\n${registry?.output().slice(-10_000)}`;

    beforeAll(async () => {
      const database = await processDatabase(kind, join(work, 'data'));
      drop = database.drop;
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      registry = startMarket(['registry', '--port', String(port), '--host', '127.0.0.1'], {
        ...database.env,
        MARKET_WEBHOOKS: 'true',
        MARKET_WEBHOOK_TIMEOUT_MS: '60000', // an endpoint that never answers holds its place all test long
        MARKET_HEALTH_ALLOW_PRIVATE: 'true',
        MARKET_HEALTH_PROBES: 'false',
        MARKET_PAYMENT_VERIFICATION: 'false',
        AUTH_JWT_SECRET: 'a-secret-for-the-bounded-webhooks-test-0123456789',
      });
      await waitForJson(`${base}/health`, 60_000);
    }, 120_000);

    afterAll(async () => {
      registry?.child.kill('SIGKILL');
      await registry?.exited;
      await drop?.();
      rmSync(work, { recursive: true, force: true });
    });

    it('reads a few KB of a 200 MB answer and drops the rest: the peak memory rises by less than 10 MB more than for a short answer', async () => {
      const flood = floodReceiver();
      const short = healthyReceiver();
      try {
        const { token } = await walletSignIn(request);
        const id = await addEndpoint(request, token, flood.url);
        const control = await addEndpoint(request, token, short.url);
        const deliveriesOf = (endpoint: string) => async () =>
          json<{ status: string; log: { status: number; excerpt: string }[] }[]>(
            await request(`/webhooks/${endpoint}/deliveries`, { headers: bearer(token) }),
          );
        const deliveries = deliveriesOf(id);
        // A first delivery warms the path up (code loaded, connections open).
        await sendTest(request, token, id);
        await eventually(deliveries, (d) => d[0]?.status === 'delivered', 'the warm-up delivered', 30_000, { context });

        // What one delivery of a short answer costs the registry's peak memory, as a baseline: the
        // noise of a loaded machine (requests, the collector's timing) counts in both figures.
        const pid = registry.child.pid;
        const controlBefore = memoryOf(pid).rss;
        resetPeak(pid);
        await sendTest(request, token, control);
        await eventually(deliveriesOf(control), (d) => d[0]?.status === 'delivered', 'the short answer delivered', 30_000, { context });
        const controlRise = Math.max(0, memoryOf(pid).peak - controlBefore);

        const before = memoryOf(pid).rss;
        resetPeak(pid);
        await sendTest(request, token, id);
        await eventually(
          () => flood.state,
          (s) => s.cancelled || s.finished,
          'the registry done with the 200 MB answer',
          60_000,
          {
            context,
          },
        );
        const peak = memoryOf(pid).peak;
        const [flooded] = await eventually(
          deliveries,
          (d) => d[0]?.status === 'delivered' && d.length === 2,
          'the delivery logged',
          30_000,
          {
            context,
          },
        );

        // The answer really streamed, and the registry stopped reading it after the first chunks.
        expect(flood.state.sent).toBeGreaterThanOrEqual(READ_LIMIT_BYTES);
        expect({ cancelled: flood.state.cancelled, finished: flood.state.finished }).toEqual({ cancelled: true, finished: false });
        expect(flood.state.sent).toBeLessThan(FLOOD_BYTES / 8);
        expect(flooded!.log[0]).toMatchObject({ status: 200, excerpt: 'a'.repeat(200) });
        expect(Math.round((peak - before - controlRise) / 1024)).toBeLessThan(10 * 1024); // KB
      } finally {
        flood.stop();
        short.stop();
      }
    }, 120_000);

    it('delivers to a healthy endpoint while 30 endpoints of 3 accounts hold every place they may take', async () => {
      const hanging = Array.from({ length: 30 }, hangingReceiver);
      const held = () => hanging.reduce((n, r) => n + r.state.held, 0);
      const healthy = healthyReceiver(held);
      try {
        const accounts = await Promise.all([0, 1, 2].map(() => walletSignIn(request)));
        const endpoints: { token: string; id: string }[] = [];
        for (const [i, receiver] of hanging.entries()) {
          const { token } = accounts[i % 3]!;
          endpoints.push({ token, id: await addEndpoint(request, token, receiver.url) });
        }
        // Three events for each: more than their accounts may have in flight at once.
        for (let round = 0; round < 3; round++) for (const e of endpoints) await sendTest(request, e.token, e.id);
        await eventually(held, (n) => n >= 30, 'the hanging endpoints holding deliveries', 30_000, { context });

        // Each attempt may take a minute (MARKET_WEBHOOK_TIMEOUT_MS): every healthy delivery arriving
        // while the 30 are still held shows it was not queued behind them.
        const other = await walletSignIn(request);
        const id = await addEndpoint(request, other.token, healthy.url);
        const events = 4;
        for (let i = 0; i < events; i++) {
          await sendTest(request, other.token, id);
          await eventually(
            () => healthy.arrivals.length,
            (n) => n > i,
            `healthy delivery ${i + 1}`,
            30_000,
            { context },
          );
        }
        expect(healthy.arrivals.map((a) => a.heldElsewhere >= 30)).toEqual(Array(events).fill(true));
        expect(held()).toBeGreaterThanOrEqual(30);
      } finally {
        for (const r of hanging) r.stop();
        healthy.stop();
      }
    }, 120_000);
  });
}
