/**
 * A production registry as `market registry` starts it, with METRICS_PORT and METRICS_TOKEN: its
 * own port answers /metrics 404, the metrics port answers 401 without the token and the metrics
 * with it; stopping the registry closes both.
 */
import { afterAll, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistryConfig } from '../../src/config';
import { startRegistry } from '../../src/registry/server';
import { seedEmbeddedDataDir } from '../support/database';
import { memoryLogger } from '../support/facilitator';
import { sampleValue, scrape } from '../support/metrics';
import { freePort } from '../support/process';

const work = mkdtempSync(join(tmpdir(), 'registry-metrics-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const TOKEN = 'the-metrics-token-of-this-test-0123';

it('serves the metrics on their own port, to the token’s holder only, and 404 on the registry’s port', async () => {
  const dataDir = join(work, 'data');
  await seedEmbeddedDataDir(dataDir);
  const [port, metricsPort] = [await freePort(), await freePort()];
  const config = loadRegistryConfig(
    {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      MARKET_DATA_DIR: dataDir,
      MARKET_HEALTH_PROBES: 'false',
      MARKET_PAYMENT_VERIFICATION: 'false',
      MARKET_RPC_URL: 'http://127.0.0.1:9',
      MARKET_WEBHOOKS: 'false',
      AUTH_JWT_SECRET: 'a-secret-of-the-registry-under-test-0123456789',
      METRICS_PORT: String(metricsPort),
      METRICS_TOKEN: TOKEN,
    },
    work,
  );
  const { logger } = memoryLogger();
  const running = await startRegistry(config, logger);
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  try {
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
    expect((await fetch(`${running.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    expect((await fetch(`${metricsUrl}/metrics`)).status).toBe(401);
    const { samples } = await scrape((path, init) => fetch(`${metricsUrl}${path}`, init), { authorization: `Bearer ${TOKEN}` });
    // The registry's own port counts its requests; the metrics port is apart.
    expect(sampleValue(samples, 'market_http_requests_total', { method: 'GET', route: '/health', status: '200' })).toBe(1);
    expect(sampleValue(samples, 'market_webhook_backlog')).toBe(0);
  } finally {
    await running.stop();
  }
  await expect(fetch(`${metricsUrl}/metrics`)).rejects.toThrow();
});
