import { describe, expect, it } from 'bun:test';
import { MAX_JSON_DEPTH, parseGuardedJson, scanJson } from 'skill-market/http';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';
import { deepArray, deepObject, expectRefusal, postJson } from './support';

describe('the JSON guard', () => {
  it('counts nesting outside strings only, escapes included', () => {
    expect(scanJson('{"a":"[[[[{{{{"}', 2)).toEqual({ type: 'ok', nul: false, loneSurrogate: false });
    expect(scanJson('{"a":"\\"[[[["}', 2)).toEqual({ type: 'ok', nul: false, loneSurrogate: false });
    expect(scanJson('{"a":"\\\\"}', 1).type).toBe('ok');
    expect(scanJson('{"a":"\\\\",[[[]]]}', 3)).toEqual({ type: 'too-deep', limit: 3 });
    expect(scanJson(deepArray(MAX_JSON_DEPTH)).type).toBe('ok');
    expect(scanJson(deepArray(MAX_JSON_DEPTH + 1)).type).toBe('too-deep');
  });

  it('finds a NUL escape but not an escaped backslash before "u0000"', () => {
    expect(scanJson('{"a":"x\\u0000y"}')).toMatchObject({ nul: true });
    expect(scanJson('{"a":"x\\\\u0000y"}')).toMatchObject({ nul: false });
  });

  it('finds unpaired surrogate escapes and lets pairs through', () => {
    expect(scanJson('"\\ud83d\\ude00"')).toMatchObject({ loneSurrogate: false });
    expect(scanJson('"\\ud83d"')).toMatchObject({ loneSurrogate: true });
    expect(scanJson('"\\ude00"')).toMatchObject({ loneSurrogate: true });
    expect(scanJson('"\\ud83dx"')).toMatchObject({ loneSurrogate: true });
    expect(scanJson('"\\ud83d\\n"')).toMatchObject({ loneSurrogate: true });
  });

  it('parses behind the guard without ever handing deep input to JSON.parse', () => {
    expect(parseGuardedJson('{"a":[1,2]}')).toEqual({ type: 'json', value: { a: [1, 2] }, nul: false, loneSurrogate: false });
    expect(parseGuardedJson(deepArray(100_000)).type).toBe('too-deep');
    expect(parseGuardedJson('{"a":').type).toBe('invalid');
  });
});

for (const kind of oneDatabase) {
  describe(`deeply nested JSON on ${kind}`, () => {
    const fx = registryFixture(kind);

    it('answers 400 MALFORMED_BODY for 20,000 nested objects on the public view counter', async () => {
      const body = await expectRefusal(
        await fx.request('/analytics/view', postJson(`{"skillId":${deepObject(20_000)}}`)),
        400,
        'MALFORMED_BODY',
      );
      expect(body.error).toContain('nested deeper than');
    });

    it('answers 400 for arrays nested 5,000 deep in a sign-in field', async () => {
      await expectRefusal(await fx.request('/auth/challenge', postJson(`{"address":${deepArray(5_000)}}`)), 400, 'MALFORMED_BODY');
    });

    it('keeps answering other requests while deep bodies arrive', async () => {
      const deep = Array.from({ length: 4 }, () => fx.request('/analytics/view', postJson(`{"skillId":${deepObject(20_000)}}`)));
      const health = await fx.request('/health');
      expect(health.status).toBe(200);
      for (const res of await Promise.all(deep)) await expectRefusal(res, 400, 'MALFORMED_BODY');
    });

    it('answers 400 for a body that is not UTF-8', async () => {
      const res = await fx.request('/auth/challenge', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
      });
      await expectRefusal(res, 400, 'MALFORMED_BODY');
    });

    it('answers 413 with the error shape for a chunked body over the limit', async () => {
      const big = 'x'.repeat(fx.config.bodyLimitBytes + 10);
      const stream = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`{"address":"${big}"}`));
          controller.close();
        },
      });
      const res = await fx.request('/auth/challenge', { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream });
      await expectRefusal(res, 413, 'PAYLOAD_TOO_LARGE');
    });
  });
}
