import { beforeAll, describe, expect, it } from 'bun:test';
import { SignJWT } from 'jose';
import { createKey, walletSignIn } from '../support/auth';
import { json, newCreator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';
import { casesFor, unknownMethodCases, type HostileCase } from './sweep-cases';

/** Longest a single in-process answer may take before the sweep calls it a hang. */
const HANG_MS = 10_000;
const CONCURRENCY = 8;

const matches = (expected: string | RegExp, error: unknown) =>
  typeof error === 'string' && (typeof expected === 'string' ? error === expected : expected.test(error));

for (const kind of oneDatabase) {
  describe(`hostile sweep over every route of /openapi.json on ${kind}`, () => {
    const fx = registryFixture(kind);
    let cases: HostileCase[] = [];
    let routeCount = 0;

    beforeAll(async () => {
      const creator = await newCreator(fx.request);
      const skill = await json<{ id: string; slug: string }>(await creator.register());
      const group = await creator.group();
      const session = (await walletSignIn(fx.request)).token;
      const key = (await createKey(fx.request, session, 'creator')).key;
      const now = Math.floor(fx.clock.now().getTime() / 1000);
      const forgedSid = await new SignJWT({ sid: 'not-a-uuid', addr: creator.address })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(creator.userId)
        .setIssuer('skill-market')
        .setAudience('skill-market')
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(fx.config.auth.jwtSecret);
      const values = {
        id: crypto.randomUUID(),
        deliveryId: crypto.randomUUID(),
        slug: skill.slug,
        skillId: skill.id,
        address: creator.address,
        group: group.slug,
      };
      const doc = (await (await fx.request('/openapi.json')).json()) as { paths: Record<string, Record<string, object>> };
      const all: HostileCase[] = [];
      const last: HostileCase[] = []; // signing out ends the session the other cases use
      for (const [template, operations] of Object.entries(doc.paths)) {
        all.push(...unknownMethodCases(template, values));
        for (const [method, op] of Object.entries(operations)) {
          routeCount++;
          const generated = casesFor(method.toUpperCase(), template, op, { session, creatorKey: key, forgedSid }, values);
          (template === '/auth/logout' ? last : all).push(...generated);
        }
      }
      cases = [...all, ...last];
    });

    it('covers every route with at least 2,000 hostile requests', () => {
      expect(routeCount).toBeGreaterThanOrEqual(30);
      expect(cases.length).toBeGreaterThanOrEqual(2000);
    });

    it('answers each with its own refusal (status and error text), never a 5xx or a hang, in the error shape with the request id', async () => {
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      const run = async (c: HostileCase) => {
        const init: RequestInit = { method: c.method, headers: c.headers, ...(c.body !== undefined ? { body: c.body } : {}) };
        let timer: ReturnType<typeof setTimeout> | undefined;
        const hang = new Promise<'hang'>((resolve) => (timer = setTimeout(() => resolve('hang'), HANG_MS)));
        const res = await Promise.race([fx.request(c.path, init), hang]).finally(() => clearTimeout(timer));
        if (res === 'hang') return void failures.push(`${c.label}: no answer within ${HANG_MS} ms`);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const text = await res.text();
        const requestId = res.headers.get('x-request-id');
        if (res.status >= 500) return void failures.push(`${c.label}: ${res.status} ${text.slice(0, 160)}`);
        if (!requestId) return void failures.push(`${c.label}: no X-Request-Id`);
        let body: { error?: unknown; code?: unknown; requestId?: unknown } = {};
        if (res.status >= 400) {
          try {
            body = JSON.parse(text);
          } catch {
            // reported below
          }
          if (typeof body.error !== 'string' || typeof body.code !== 'string' || body.requestId !== requestId) {
            return void failures.push(`${c.label}: ${res.status} without the error shape: ${text.slice(0, 120)}`);
          }
        }
        if (c.expect !== 'no-5xx' && !c.expect.refusals.some((r) => r.status === res.status && matches(r.error, body.error))) {
          const wanted = c.expect.refusals.map((r) => `${r.status} ${String(r.error)}`).join(' or ');
          failures.push(`${c.label}: expected ${wanted}, got ${res.status} ${JSON.stringify(body.error ?? text.slice(0, 120))}`);
        }
      };
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < cases.length) await run(cases[next++]!);
        }),
      );
      expect(failures).toEqual([]);
      // The sweep reached past the front door: validation refusals, not only 401s; and inputs a
      // route may take were taken, so a registry refusing everything cannot pass.
      expect(statuses.get(400) ?? 0).toBeGreaterThan(500);
      expect((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0)).toBeGreaterThan(100);
    }, 240_000);
  });
}
