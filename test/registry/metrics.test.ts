/**
 * The registry's /metrics (Prometheus text format), on both databases: HTTP requests counted by
 * route template and status, a failed webhook delivery in the backlog and the attempts, the skill
 * servers and the pool's use; and who may read them: anyone in development and tests, nobody in
 * production unless configured, only the token's holder when METRICS_TOKEN is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { DatabaseHandle } from '../../src/db';
import { systemClock } from '../../src/registry';
import { createHealthProber } from '../../src/registry/modules/skill-health';
import { createWebhookDeliverer } from '../../src/registry/modules/webhooks';
import { bearer, jsonPost, walletSignIn } from '../support/auth';
import { newCreator } from '../support/catalogue';
import { databaseKinds, openTestDatabase } from '../support/database';
import { sampleValue, scrape } from '../support/metrics';
import { freePort } from '../support/process';
import { memoryLogger, testConfig, testRegistry } from '../support/registry';
import { webhookReceiver } from '../support/webhooks';

const TOKEN = 'a-metrics-token-of-the-test-0123456789';

for (const kind of databaseKinds) {
  describe(`the registry's metrics (${kind} database)`, () => {
    let database: DatabaseHandle;
    let registry: ReturnType<typeof testRegistry>;
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      // Loopback allowed: the webhook receiver and the skill server are there.
      const defaults = testConfig();
      registry = testRegistry(database, {
        health: { ...defaults.health, allowPrivateAddresses: true },
        catalogue: { ...defaults.catalogue, allowHttpEndpoints: true },
      });
    });
    afterAll(() => database.close());

    it('serves the Prometheus text format, counting requests by route template and status, never the URL asked', async () => {
      const before = (await scrape(registry.request)).samples;
      const requests = (labels: Record<string, string>, samples = before) =>
        sampleValue(samples, 'market_http_requests_total', { method: 'GET', ...labels }) ?? 0;
      expect((await registry.request('/health')).status).toBe(200);
      expect((await registry.request('/skills/no-such-skill-a1')).status).toBe(404);
      expect((await registry.request('/skills/no-such-skill-b2')).status).toBe(404);
      await registry.settled(); // requests are counted as their access-log lines are written
      const { samples, text } = await scrape(registry.request);

      expect(requests({ route: '/health', status: '200' }, samples) - requests({ route: '/health', status: '200' })).toBe(1);
      expect(requests({ route: '/skills/:slug', status: '404' }, samples) - requests({ route: '/skills/:slug', status: '404' })).toBe(2);
      const count = (s: typeof samples) =>
        sampleValue(s, 'market_http_request_duration_seconds_count', { method: 'GET', route: '/skills/:slug' }) ?? 0;
      expect(count(samples) - count(before)).toBe(2);
      expect(text).not.toContain('no-such-skill');
      expect(text).toContain('# TYPE market_http_request_duration_seconds histogram');
      // Nothing listed: no skill server to be up or down.
      expect(sampleValue(samples, 'market_skill_servers', { status: 'down' })).toBe(0);
      expect(sampleValue(samples, 'market_skill_server_longest_outage_seconds')).toBe(0);
      // The pool's use: PostgreSQL only (the embedded database has none).
      expect(sampleValue(samples, 'market_db_pool_size')).toEqual(kind === 'postgres' ? expect.any(Number) : undefined);
      expect(sampleValue(samples, 'market_db_statements_in_flight')).toEqual(kind === 'postgres' ? expect.any(Number) : undefined);
      expect(sampleValue(samples, 'market_db_deadline_hits_total')).toBe(kind === 'postgres' ? 0 : undefined);
    });

    it('counts a probe of a skill server that does not answer, and shows it down', async () => {
      const creator = await newCreator(registry.request);
      const listed = await creator.register({ endpoint: `http://127.0.0.1:${await freePort()}/skill` });
      expect(listed.status).toBe(201);
      const before = (await scrape(registry.request)).samples;
      const prober = createHealthProber({
        db: database.db,
        config: { ...testConfig().health, allowPrivateAddresses: true, timeoutMs: 1000 },
        clock: systemClock,
        logger: memoryLogger().logger,
        onOutcome: registry.metrics.probeOutcome,
      });
      expect(await prober.probeNow()).toMatchObject({ probed: 1, down: 1 });
      const after = (await scrape(registry.request)).samples;
      const diff = (name: string, labels: Record<string, string> = {}) =>
        (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0);
      expect(diff('market_health_probes_total', { outcome: 'down' })).toBe(1);
      expect(diff('market_skill_servers', { status: 'down' })).toBe(1);
      expect(diff('market_skill_servers', { status: 'unknown' })).toBe(-1);
      expect(sampleValue(after, 'market_skill_server_longest_outage_seconds')).toBeGreaterThanOrEqual(0);
    });

    it('shows a failed webhook delivery in the backlog and in the attempts by verdict', async () => {
      const sink = webhookReceiver(() => new Response('broken', { status: 500 }));
      try {
        const { token } = await walletSignIn(registry.request);
        const created = await registry.request('/webhooks', jsonPost({ url: sink.url, events: ['review.created'] }, bearer(token)));
        expect({ status: created.status, body: await created.clone().text() }).toMatchObject({ status: 201 });
        const { id } = (await created.json()) as { id: string };
        const before = (await scrape(registry.request)).samples;
        expect((await registry.request(`/webhooks/${id}/test`, jsonPost({}, bearer(token)))).status).toBe(200);
        const { logger } = memoryLogger();
        const deliverer = createWebhookDeliverer({
          db: database.db,
          clock: systemClock,
          logger,
          allowPrivateAddresses: true,
          onVerdict: registry.metrics.webhookVerdict,
        });
        expect(await deliverer.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 });
        const after = (await scrape(registry.request)).samples;

        const diff = (name: string, labels: Record<string, string> = {}) =>
          (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0);
        expect(diff('market_webhook_backlog')).toBe(1);
        expect(diff('market_webhook_attempts_total', { outcome: 'retrying' })).toBe(1);
        expect(diff('market_webhook_attempts_total', { outcome: 'delivered' })).toBe(0);
        expect(sampleValue(after, 'market_webhook_backlog_oldest_seconds')).toBeGreaterThanOrEqual(0);
        expect(sampleValue(after, 'market_webhook_endpoints_disabled')).toBe(0);
        await registry.request(`/webhooks/${id}`, { method: 'DELETE', headers: bearer(token) });
        expect(sampleValue((await scrape(registry.request)).samples, 'market_webhook_backlog')).toBe(
          sampleValue(before, 'market_webhook_backlog'),
        );
      } finally {
        sink.stop();
      }
    });
  });
}

describe('who may read the metrics', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase('embedded');
  });
  afterAll(() => database.close());

  it('keeps /metrics out of the API: not in the OpenAPI document', async () => {
    const spec = (await (await testRegistry(database).request('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths)).not.toContain('/metrics');
  });

  it('answers 404 in production when nothing is configured', async () => {
    const { request } = testRegistry(database, { metrics: { enabled: false } });
    const res = await request('/metrics');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', requestId: expect.any(String) });
  });

  it('answers 404 on the registry’s own port when the metrics have a listener of their own', async () => {
    const { request } = testRegistry(database, { metrics: { enabled: true, listener: { host: '127.0.0.1', port: 0 } } });
    expect((await request('/metrics')).status).toBe(404);
  });

  it('answers 401 without the token or with another, and the metrics with it', async () => {
    const { request, settled } = testRegistry(database, { metrics: { enabled: true, token: TOKEN } });
    const missing = await request('/metrics');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await missing.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    expect((await request('/metrics', { headers: bearer(`${TOKEN}x`) })).status).toBe(401);
    expect((await request('/metrics', { headers: { authorization: TOKEN } })).status).toBe(401);
    await settled();
    const { samples } = await scrape(request, bearer(TOKEN));
    expect(sampleValue(samples, 'market_http_requests_total', { method: 'GET', route: '/metrics', status: '401' })).toBe(3);
  });
});
