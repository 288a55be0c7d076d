/**
 * A registry process killed with SIGKILL loses no webhook event: one stored while it did not send
 * (between storing and sending) is delivered by the restarted process; one it was sending when it
 * died is sent again by the restarted process once the lease ends, with the same `webhook-id`,
 * and counts as delivered once. PostgreSQL when TEST_DATABASE_URL is set, else an embedded
 * database in a data folder, as a deployment keeps them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer, jsonPost, walletSignIn } from '../support/auth';
import { processDatabase, TEST_DATABASE_URL } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort, startMarket, waitForJson, type MarketProcess } from '../support/process';
import { webhookReceiver } from '../support/webhooks';

const work = mkdtempSync(join(tmpdir(), 'registry-kill-'));
let database: Record<string, string>;
let dropDatabase: (() => Promise<void>) | undefined;
let port: number;
let registry: MarketProcess | undefined;

/** A receiver that keeps the first `hang` requests waiting (an answer that never comes), then answers 200. */
function receiver() {
  const seen: { id: string; type: string }[] = [];
  const state = { hang: 0 };
  const sink = webhookReceiver(async (request) => {
    const body = (await request.json()) as { type: string };
    seen.push({ id: request.headers.get('webhook-id') ?? '', type: body.type });
    if (state.hang > 0) {
      state.hang--;
      return new Promise<Response>(() => {});
    }
    return new Response('ok');
  });
  return { ...sink, seen, state };
}

const sink = receiver();
const base = () => `http://127.0.0.1:${port}`;
const request = (path: string, init?: RequestInit) => fetch(`${base()}${path}`, init);

async function startRegistry(webhooks: boolean): Promise<MarketProcess> {
  const started = startMarket(['registry', '--port', String(port), '--host', '127.0.0.1'], {
    LOG_LEVEL: 'info',
    ...database,
    MARKET_WEBHOOKS: String(webhooks),
    MARKET_HEALTH_ALLOW_PRIVATE: 'true',
    MARKET_HEALTH_PROBES: 'false',
    // A send cut by the kill is taken again after the attempt's timeout and the lease's margin (15 s by default).
    MARKET_WEBHOOK_TIMEOUT_MS: '3000',
    MARKET_WEBHOOK_LEASE_MARGIN_MS: '500',
    AUTH_JWT_SECRET: 'a-secret-the-two-registry-processes-share-0123456789',
  });
  await waitForJson(`${base()}/health`, 60_000);
  return started;
}

async function kill(process: MarketProcess | undefined) {
  process?.child.kill('SIGKILL');
  await process?.exited;
}

beforeAll(async () => {
  port = await freePort();
  const created = await processDatabase(TEST_DATABASE_URL ? 'postgres' : 'embedded', join(work, 'data'));
  database = created.env;
  dropDatabase = created.drop;
}, 120_000);

afterAll(async () => {
  await kill(registry);
  sink.stop();
  await dropDatabase?.();
  rmSync(work, { recursive: true, force: true });
});

describe('webhooks across a registry killed with SIGKILL', () => {
  let token: string;
  let endpointId: string;
  const deliveries = async () =>
    (await (await request(`/webhooks/${endpointId}/deliveries`, { headers: bearer(token) })).json()) as {
      eventId: string;
      status: string;
      attempts: number;
    }[];
  const until = <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms: number) =>
    eventually(read, done, what, ms, { context: () => `--- registry\n${registry?.output().slice(-20_000)}` });

  it('delivers after a restart an event stored while nothing sent it', async () => {
    registry = await startRegistry(false); // stores events, sends none
    token = (await walletSignIn(request)).token;
    const created = await request('/webhooks', jsonPost({ url: sink.url, events: ['call.paid'] }, bearer(token)));
    expect(created.status).toBe(201);
    endpointId = ((await created.json()) as { id: string }).id;
    expect((await request(`/webhooks/${endpointId}/test`, jsonPost({}, bearer(token)))).status).toBe(200);
    const [stored] = await deliveries();
    expect(stored).toMatchObject({ status: 'pending', attempts: 0 });
    await kill(registry);

    registry = await startRegistry(true);
    await until('the stored event delivered', deliveries, (d) => d[0]?.status === 'delivered', 30_000);
    expect(sink.seen).toEqual([{ id: stored!.eventId, type: 'webhook.test' }]);
  }, 120_000);

  it('sends again, with the same webhook-id, what it was sending when it was killed, and counts it delivered once', async () => {
    sink.state.hang = 1;
    const before = sink.seen.length;
    expect((await request(`/webhooks/${endpointId}/test`, jsonPost({}, bearer(token)))).status).toBe(200);
    await until(
      'the receiver holding the first attempt',
      async () => sink.seen.length,
      (n) => n > before,
      30_000,
    );
    await kill(registry); // mid-send: the attempt never finished

    registry = await startRegistry(true);
    const [latest] = await until('the event delivered after the lease', deliveries, (d) => d[0]?.status === 'delivered', 60_000);
    const sent = sink.seen.slice(before);
    expect(sent).toHaveLength(2);
    expect(sent.map((s) => s.id)).toEqual([latest!.eventId, latest!.eventId]);
    expect(latest).toMatchObject({ status: 'delivered', attempts: 1 });
  }, 120_000);
});
