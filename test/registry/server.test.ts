/**
 * The registry as `market registry` starts it (startRegistry), in this process: it opens its
 * embedded database, listens on its port, sends webhook deliveries in the background with the
 * attempt timeout of its configuration (MARKET_WEBHOOK_TIMEOUT_MS), and stops.
 */
import { afterAll, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistryConfig } from '../../src/config';
import { startRegistry } from '../../src/registry/server';
import { bearer, jsonPost, walletSignIn } from '../support/auth';
import { seedEmbeddedDataDir } from '../support/database';
import { eventually } from '../support/eventually';
import { memoryLogger } from '../support/facilitator';
import { freePort } from '../support/process';

const work = mkdtempSync(join(tmpdir(), 'registry-server-'));
/** A webhook receiver that never answers. */
const silent = Bun.serve({ port: 0, hostname: '127.0.0.1', idleTimeout: 0, fetch: () => new Promise<Response>(() => {}) });
afterAll(() => {
  silent.stop(true);
  rmSync(work, { recursive: true, force: true });
});

it('listens on its port, gives a webhook attempt the configured timeout in the background, and stops', async () => {
  const dataDir = join(work, 'data');
  await seedEmbeddedDataDir(dataDir);
  const port = await freePort();
  const config = loadRegistryConfig(
    {
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      MARKET_DATA_DIR: dataDir,
      MARKET_WEBHOOKS: 'true',
      MARKET_WEBHOOK_TIMEOUT_MS: '200',
      MARKET_HEALTH_ALLOW_PRIVATE: 'true',
      AUTH_JWT_SECRET: 'a-secret-of-the-registry-under-test-0123456789',
    },
    work,
  );
  const { logger, lines } = memoryLogger();
  const running = await startRegistry(config, logger);
  const request = (path: string, init?: RequestInit) => fetch(`${running.url}${path}`, init);
  try {
    expect(running.url).toBe(`http://127.0.0.1:${port}`);
    expect(await (await request('/health')).json()).toMatchObject({ status: 'ok', database: 'embedded' });

    const { token } = await walletSignIn(request);
    const created = await request(
      '/webhooks',
      jsonPost({ url: `http://127.0.0.1:${silent.port}/hooks`, events: ['call.paid'] }, bearer(token)),
    );
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await request(`/webhooks/${id}/test`, jsonPost({}, bearer(token)))).status).toBe(200);
    type Delivery = { status: string; attempts: number; log: { status: number | null; excerpt: string | null }[] };
    const [delivery] = await eventually(
      async () => (await (await request(`/webhooks/${id}/deliveries`, { headers: bearer(token) })).json()) as Delivery[],
      (d) => d[0]?.attempts === 1,
      'the background delivery gives up its first attempt',
      10_000,
      { context: () => lines.join('\n') },
    );
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, log: [{ status: null, excerpt: 'no answer within 200 ms' }] });
  } finally {
    await running.stop();
  }
  await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
}, 60_000);
