import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { WEBHOOK_EVENTS } from 'skill-market/registry';
import type { DatabaseHandle } from '../../src/db';
import { openTestDatabase } from '../support/database';
import { testRegistry } from '../support/registry';

let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase('embedded');
});
afterAll(() => database.close());

describe('API documentation', () => {
  it('serves /openapi.json as a valid OpenAPI 3 document listing the routes', async () => {
    const res = await testRegistry(database).request('/openapi.json');
    expect(res.status).toBe(200);
    const document = (await res.json()) as any;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toContain('/health');
  });

  it('documents every webhook event with its body schema and signature headers', async () => {
    const { webhooks } = (await (await testRegistry(database).request('/openapi.json')).json()) as any;
    expect(Object.keys(webhooks).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    const paid = webhooks['call.paid'].post;
    expect(paid.parameters.map((p: any) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    const body = paid.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['type', 'timestamp', 'data']);
    // Two forms: a transfer (exact), and a call paid over a payment channel, its money earned.
    const [exact, channel] = body.properties.data.anyOf;
    expect(exact.required).toEqual(expect.arrayContaining(['version', 'skill', 'amount', 'payer', 'scheme', 'transaction', 'network']));
    expect(channel.required).toEqual(
      expect.arrayContaining(['version', 'skill', 'amount', 'scheme', 'channelId', 'chargedCumulativeAmount', 'network', 'payer', 'state']),
    );
    expect(channel.properties.scheme.const).toBe('batch-settlement');
    expect(channel.properties.state.const).toBe('earned');
  });

  it('documents the dashboard’s reads with their parameters and answer schemas', async () => {
    const { paths } = (await (await testRegistry(database).request('/openapi.json')).json()) as any;
    const usage = paths['/analytics/usage'].get;
    expect(usage.parameters.map((p: any) => p.name)).toEqual(['limit', 'cursor']);
    expect(usage.responses['200'].content['application/json'].schema.items.required).toEqual([
      'id',
      'skillId',
      'skillSlug',
      'skillName',
      'amount',
      'amountAtomic',
      'paymentRef',
      'network',
      'verification',
      'verificationReason',
      'scheme',
      'channel',
      'createdAt',
    ]);
    const payments = paths['/analytics/{skillId}/payments'].get;
    expect(payments.parameters.map((p: any) => p.name)).toEqual(['skillId', 'state', 'receipt', 'limit', 'cursor']);
    expect(payments.responses['200'].content['application/json'].schema.items.required).toEqual([
      'id',
      'txHash',
      'network',
      'amount',
      'amountAtomic',
      'state',
      'reason',
      'payer',
      'reportedAt',
      'decidedAt',
    ]);
    expect(paths['/analytics/{skillId}'].get.responses['200'].content['application/json'].schema.required).toContain(
      'rejectedPaymentCount',
    );
    expect(paths['/analytics/favorites'].get.responses['200'].content['application/json'].schema.items.required).toContain('isActive');
    expect(paths['/analytics/{skillId}'].get.parameters.map((p: any) => p.name)).toEqual(['skillId', 'days']);
    expect(paths['/wallet/{address}'].get.responses['200'].content['application/json'].schema.required).toContain('balanceAtomic');
    for (const path of ['/analytics/usage', '/analytics/favorites', '/analytics/{skillId}/payments', '/wallet/{address}'])
      expect(paths[path].get.security).toEqual([{ bearer: [] }, { cookie: [] }]);
  });

  it('serves a docs page at /docs that loads /openapi.json with its own files, none from elsewhere', async () => {
    const registry = testRegistry(database);
    const res = await registry.request('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    const start = [...html.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!).find((src) => src.endsWith('start.js'))!;
    expect(await (await registry.request(`/${start}`)).text()).toContain("url: 'openapi.json'");
  });
});
