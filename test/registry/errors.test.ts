import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { t } from 'elysia';
import type { DatabaseHandle } from '../../src/db';
import { AppError } from '../../src/registry';
import { openTestDatabase } from '../support/database';
import { testRegistry } from '../support/registry';

let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase('embedded');
});
afterAll(() => database.close());

/** The registry with a few probe routes, so the shared plugins are tested through real routes. */
function probe() {
  const registry = testRegistry(database, { bodyLimitBytes: 2048 });
  registry.app
    .post('/probe/echo', ({ body }) => body, {
      body: t.Object({ name: t.String({ minLength: 1 }), price: t.Optional(t.Number({ exclusiveMinimum: 0 })) }),
    })
    .get('/probe/conflict', () => {
      throw new AppError('CONFLICT', 'Group is in use');
    })
    .get('/probe/crash', () => {
      throw new Error('database password=hunter2 leaked');
    });
  return registry;
}
const json = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('one error shape', () => {
  it('answers an unknown route 404 with {error, code, requestId}', async () => {
    const res = await probe().request('/no/such/route');
    expect(res.status).toBe(404);
    const body = (await res.json()) as any;
    expect(body).toEqual({ error: 'Not found', code: 'NOT_FOUND', requestId: res.headers.get('x-request-id') });
  });

  it('answers malformed JSON 400 with a clear message', async () => {
    const res = await probe().request('/probe/echo', json('{"name": '));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'Malformed request body: expected valid JSON', code: 'MALFORMED_BODY' });
  });

  it('answers a validation failure 400 naming the field', async () => {
    const res = await probe().request('/probe/echo', json('{"name": "ok", "price": -1}'));
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.code).toBe('VALIDATION');
    expect(body.error).toContain('"price"');
    expect(body.details[0].field).toBe('price');
  });

  it('answers a missing required field 400 naming it', async () => {
    const res = await probe().request('/probe/echo', json('{}'));
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toContain('"name"');
  });

  it('answers a body over the limit 413 before reading it', async () => {
    const res = await probe().request('/probe/echo', json(JSON.stringify({ name: 'x'.repeat(4096) })));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('maps a service error to its status with the message in error', async () => {
    const res = await probe().request('/probe/conflict');
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: 'Group is in use', code: 'CONFLICT' });
  });

  it('answers our own fault 500 without internals, and logs it with the request id', async () => {
    const registry = probe();
    const res = await registry.request('/probe/crash');
    expect(res.status).toBe(500);
    const body = (await res.json()) as any;
    expect(body).toEqual({ error: 'Internal server error', code: 'INTERNAL', requestId: body.requestId });
    expect(JSON.stringify(body)).not.toContain('hunter2');
    expect(registry.logs.some((l) => l.msg === 'unhandled error' && l.requestId === body.requestId)).toBe(true);
  });
});

describe('request ids and the access log', () => {
  it('keeps a sane incoming X-Request-Id and replaces a bad one', async () => {
    const kept = await probe().request('/health', { headers: { 'x-request-id': 'trace-1234-abcd' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-1234-abcd');
    const replaced = await probe().request('/health', { headers: { 'x-request-id': 'bad id with spaces!' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('writes one line per request with method, path and status, never the query or credentials', async () => {
    const registry = probe();
    await registry.request('/health?token=secret-token-value', { headers: { authorization: 'Bearer sk_live_secret' } });
    await registry.settled(); // its access-log line is written after the answer
    const lines = registry.logs.filter((l) => l.msg === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: 'GET', path: '/health', status: 200 });
    expect(typeof lines[0]!.requestId).toBe('string');
    expect(JSON.stringify(registry.logs)).not.toContain('secret');
  });
});
