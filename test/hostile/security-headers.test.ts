/**
 * The security headers of every registry answer — pages, the API, /docs and its files, 404s and
 * other refusals: a content policy that forbids framing (`frame-ancestors 'none'`, in the header:
 * a meta tag cannot say it), X-Frame-Options, nosniff, a referrer policy, and HSTS exactly when
 * PUBLIC_URL is https. (The facilitator's answers are checked over a socket in http.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { DatabaseHandle } from '../../src/db';
import { openTestDatabase } from '../support/database';
import { testRegistry } from '../support/registry';
import { expectSecurityHeaders } from './support';

let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase('embedded');
});
afterAll(() => database.close());

describe('security headers of the registry', () => {
  const registry = () => testRegistry(database);

  it('come with every kind of answer', async () => {
    const api = registry();
    const answers: [string, string, RequestInit?][] = [
      ['an API answer', '/health'],
      ['a list', '/skills'],
      ['the spec', '/openapi.json'],
      ['a page', '/'],
      ['the dashboard', '/dashboard/keys'],
      ['/docs', '/docs'],
      ['a 404', '/no-such-path'],
      ['a 404 under the API', '/skills/no-such-skill'],
      ['a 401', '/auth/api-keys'],
      ['a 400', '/skills/%00'],
      ['a method no route takes', '/', { method: 'DELETE' }],
      ['a malformed body', '/groups', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }],
    ];
    for (const [what, path, init] of answers) expectSecurityHeaders((await api.request(path, init)).headers, what);
  });

  it('give pages their own policy in the header, and no meta tag policy is left', async () => {
    const page = await registry().request('/skill/anything');
    const policy = expectSecurityHeaders(page.headers, 'the skill page');
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("object-src 'none'");
    expect(await page.text()).not.toMatch(/http-equiv="Content-Security-Policy"/i);
    const api = await registry().request('/health');
    expect(api.headers.get('content-security-policy')).toStartWith("default-src 'none'");
  });

  it('give /docs a policy that loads only from this origin, and its files the headers too', async () => {
    const docs = await registry().request('/docs');
    const policy = expectSecurityHeaders(docs.headers, '/docs');
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toMatch(/https:|http:|\*/);
    const html = await docs.text();
    const files = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => `/${m[1]!.replace(/^\//, '')}`);
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const res = await registry().request(file);
      expect({ file, status: res.status }).toEqual({ file, status: 200 });
      expectSecurityHeaders(res.headers, file);
    }
  });

  it('send Strict-Transport-Security only when PUBLIC_URL is https', async () => {
    const secure = testRegistry(database, { publicUrl: new URL('https://market.example.com') });
    for (const path of ['/health', '/', '/docs', '/nope']) {
      expect((await secure.request(path)).headers.get('strict-transport-security')).toBe('max-age=31536000');
    }
    for (const path of ['/health', '/', '/nope'])
      expect((await registry().request(path)).headers.get('strict-transport-security')).toBeNull();
  });
});
