/**
 * Random values at every query and path parameter of every operation of `/openapi.json`, on each
 * database: never a 5xx, and every refusal in the error shape. The values come from a seeded
 * generator (fast-check): numbers out of every range (negative, huge, NaN, 1e400, fractions),
 * empty, unicode and lone surrogates, very long text, a parameter given several times or as an
 * array, bad and edge dates, bad UUIDs, raw percent signs; mixed with values the schema admits
 * (the real skill, group, webhook and delivery among them), so that handlers run with them, with
 * a session on the routes that need one. The seed is printed; `PARAMS_SEED=<seed>` runs the same
 * values again, and a failure names the smallest request found that answers a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import fc from 'fast-check';
import { DiscoveryResourcesQuery, DiscoverySearchQuery } from 'skill-market/registry';
import { readHealthConfig } from '../../src/config';
import type { DatabaseKind } from '../../src/db';
import { bearer, jsonPost } from '../support/auth';
import { json, newCreator } from '../support/catalogue';
import { startChain, type LocalChain } from '../support/chain';
import { databaseKinds } from '../support/database';
import { startFacilitatorFixture, type FacilitatorFixture } from '../support/facilitator';
import { registryFixture } from '../support/registry';
import { plausible } from './sweep-cases';

const SEED = Number(process.env.PARAMS_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Requests per operation. */
const RUNS = 40;

type Schema = Record<string, any>;
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}
interface Operation {
  method: string;
  template: string;
  parameters: Parameter[];
  body?: Schema;
  secured: boolean;
}
interface Sent {
  method: string;
  path: string;
  body?: string;
}

/** Percent-encodes `text`, lone surrogates too (as the bytes of their WTF-8 form, which no decoder takes). */
function encode(text: string): string {
  return [...text]
    .map((ch) => {
      try {
        return encodeURIComponent(ch);
      } catch {
        const c = ch.charCodeAt(0);
        return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
      }
    })
    .join('');
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const day = (d: Date) => d.toISOString().slice(0, 10);

const numbers = fc.oneof(
  fc.constantFrom('0', '-1', '-0', '1e400', '-1e400', 'NaN', 'Infinity', '-Infinity', '9999999999', '1e-400', '0x10', '1.5', '007', '+5'),
  fc.constantFrom(' 7', '9007199254740993', '-9223372036854775809', '1_000', '1,2', '٣'),
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
);
const dates = fc.oneof(
  fc.constantFrom('2026-13-45', '2026-02-30', '2025-02-29', '2024-02-29', '0000-01-01', '9999-12-31', '1969-12-31', '1970-01-01'),
  fc.constantFrom('-000001-01-01', '+275760-09-13', '2026-1-1', '2026-01-01T00:00:00Z', '20260101', 'yesterday', '2026-00-00'),
  fc
    .tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }))
    .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.date({ noInvalidDate: true }).map(day),
);
const uuids = fc.oneof(
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => `${u.slice(0, -1)}g`),
  fc.uuid().map((u) => u.replaceAll('-', '')),
  fc.uuid().map((u) => `{${u}}`),
  fc.uuid().map((u) => u.slice(0, 35)),
  fc.constant('00000000-0000-0000-0000-000000000000'),
);
const texts = fc.oneof(
  fc.constant(''),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('😀', '\u0000', '\ud800', '\udfff', '../../etc/passwd', "' or 1=1 --", '<script>', '__proto__', 'constructor', 'null'),
  fc.constantFrom('true', '[]', '{}', '0x', 'ß', 'İ', '\u202e', 'a\u0301', ' ', '\t', '\n'),
  fc.tuple(fc.constantFrom('a', '😀', '9', '%', '-'), fc.integer({ min: 200, max: 20_000 })).map(([c, n]) => c.repeat(n)),
  fc.stringMatching(/^0x[0-9a-fA-F]{0,42}$/),
  fc.json().map((j) => Buffer.from(j).toString('base64url')),
);
/** Any hostile value, percent-encoded. */
const hostile = fc.oneof(numbers, dates, uuids, texts).map(encode);
/** Put in the URL as they are: broken escapes, separators. */
const raw = fc.constantFrom('%', '%ZZ', '%E0%A4%A', '%C0%AF', '%ED%A0%80', 'a&b=c', 'a#b', 'a/b', '..', '.', '%2F', 'a;b', 'a?b', '+');

/**
 * Values the parameter's schema admits, or nearly (its pattern alone, its range's ends; the real
 * record when there is one), percent-encoded.
 */
function admitted(schema: Schema | undefined, known: string | undefined): fc.Arbitrary<string> {
  const options: fc.Arbitrary<string>[] = known ? [fc.constant(known)] : [];
  if (schema?.enum) options.push(fc.constantFrom(...(schema.enum as string[])));
  else if (schema?.type === 'number' || schema?.type === 'integer') {
    const [min, max] = [schema.minimum ?? -1e6, schema.maximum ?? 1e6];
    options.push(fc.integer({ min, max }).map(String), fc.constantFrom(String(min), String(max)));
  } else if (schema?.format === 'uuid') options.push(fc.uuid());
  else if (schema?.pattern) options.push(fc.stringMatching(new RegExp(schema.pattern)));
  else options.push(fc.string({ unit: 'grapheme', minLength: schema?.minLength ?? 0, maxLength: Math.min(schema?.maxLength ?? 50, 50) }));
  if (schema?.format === 'date') {
    options.push(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map(day));
    options.push(fc.constantFrom('1970-01-01', '9999-12-31', '2024-02-29'));
  }
  return fc.oneof(...options).map(encode);
}

/** A parameter set to a value its schema admits (a query parameter perhaps left out), and set to a hostile one. */
function parameter(p: Parameter, known: string | undefined): { good: fc.Arbitrary<string | undefined>; bad: fc.Arbitrary<string> } {
  const fine = admitted(p.schema, known);
  const wrong = fc.oneof({ weight: 4, arbitrary: hostile }, { weight: 1, arbitrary: raw });
  if (p.in === 'path') return { good: fine, bad: wrong };
  const set = (values: string[], form = p.name) => values.map((v) => `${form}=${v}`).join('&');
  return {
    good: fc.option(
      fine.map((v) => set([v])),
      { nil: undefined },
    ),
    bad: fc.oneof(
      { weight: 6, arbitrary: wrong.map((v) => set([v])) },
      // Given several times, or as an array, with values it would take once.
      { weight: 1, arbitrary: fc.array(fc.oneof(fine, wrong), { minLength: 2, maxLength: 3 }).map((vs) => set(vs)) },
      { weight: 1, arbitrary: fc.oneof(fine, wrong).map((v) => set([v], `${p.name}[]`)) },
      { weight: 1, arbitrary: fc.oneof(fine, wrong).map((v) => set([v], `${p.name}[0]`)) },
      { weight: 1, arbitrary: fc.constantFrom(p.name, `${p.name}=`) },
    ),
  };
}

/**
 * Requests to `op`: mostly one parameter hostile and the others admitted (so the hostile one is
 * what the route meets), else every one hostile or admitted at random, or all admitted.
 */
function requests(op: Operation, known: (template: string, name: string) => string | undefined): fc.Arbitrary<Sent> {
  const params = op.parameters.map((p) => parameter(p, known(op.template, p.name)));
  const mixes = fc.tuple(...params.map((p) => fc.oneof(p.good, p.bad)));
  const stray = fc.option(
    fc.tuple(texts, texts).map(([k, v]) => `${encode(k)}=${encode(v)}`),
    { nil: undefined, freq: 4 },
  );
  const values = fc
    .oneof(
      {
        weight: 3,
        arbitrary: fc.tuple(fc.nat(params.length - 1), fc.tuple(...params.map((p) => p.good)), fc.tuple(...params.map((p) => p.bad))),
      },
      { weight: 1, arbitrary: fc.tuple(fc.constant(-1), mixes, mixes) },
      { weight: 1, arbitrary: fc.tuple(fc.constant(-1), fc.tuple(...params.map((p) => p.good)), mixes) },
    )
    .map(([target, good, bad]) => good.map((g, i) => (i === target ? bad[i] : g)));
  const base = op.body?.anyOf?.[0] ?? op.body;
  const body = base ? JSON.stringify(plausible(base)) : undefined;
  return fc.tuple(values, stray).map(([chosen, extra]) => {
    const pathValues = op.parameters.flatMap((p, i) => (p.in === 'path' ? [chosen[i] ?? 'x'] : []));
    const queryParts = op.parameters.flatMap((p, i) => (p.in === 'query' && chosen[i] !== undefined ? [chosen[i]] : []));
    let i = 0;
    const filled = op.template.replace(/\{[^}]+\}/g, () => pathValues[i++] ?? 'x');
    const q = [...queryParts, ...(extra === undefined ? [] : [extra])].join('&');
    return { method: op.method, path: q ? `${filled}?${q}` : filled, ...(body !== undefined ? { body } : {}) };
  });
}

/** What a sweep's answers were: taken (2xx), refused as invalid (400), refused for want of a credential (401). */
interface Statuses {
  ok: number;
  invalid: number;
  unauthorized: number;
}

/**
 * Sends RUNS random requests to each of `operations` (with `credential` where one is needed);
 * fails naming the seed and, for each operation that got one, the smallest request found that
 * answered a 5xx or a refusal out of the error shape.
 */
async function sweep(
  what: string,
  operations: Operation[],
  known: (template: string, name: string) => string | undefined,
  request: (path: string, init?: RequestInit) => Promise<Response>,
  credential: Record<string, string>,
): Promise<Statuses> {
  console.log(`parameter sweep of ${what}: seed ${SEED} (PARAMS_SEED=${SEED} runs the same values again)`);
  const statuses: Statuses = { ok: 0, invalid: 0, unauthorized: 0 };
  const failures: string[] = [];
  for (const op of operations) {
    let last = '';
    const property = fc.asyncProperty(requests(op, known), async (sent) => {
      const res = await request(sent.path, {
        method: sent.method,
        headers: { ...(op.secured ? credential : {}), ...(sent.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(sent.body !== undefined ? { body: sent.body } : {}),
      });
      const text = await res.text();
      if (res.status >= 200 && res.status < 300) statuses.ok++;
      if (res.status === 400) statuses.invalid++;
      if (res.status === 401) statuses.unauthorized++;
      let shaped = res.status < 400;
      if (!shaped) {
        try {
          const body = JSON.parse(text) as { error?: unknown; code?: unknown; requestId?: unknown };
          shaped = typeof body.error === 'string' && typeof body.code === 'string' && body.requestId === res.headers.get('x-request-id');
        } catch {
          shaped = false;
        }
      }
      if (res.status < 500 && shaped) return true;
      last = `${sent.method} ${sent.path.slice(0, 300)} answered ${res.status} ${text.slice(0, 200)}`;
      return false;
    });
    const run = await fc.check(property, { seed: SEED, numRuns: RUNS });
    if (run.failed) failures.push(`seed ${SEED}: ${last}\n${fc.defaultReportMessage(run)?.slice(0, 1500)}`);
  }
  expect(failures).toEqual([]);
  return statuses;
}

for (const kind of databaseKinds) {
  describe(`random values at every parameter of /openapi.json on ${kind}`, () => {
    const fx = registryFixture(kind, { health: readHealthConfig({ MARKET_HEALTH_ALLOW_PRIVATE: 'true' }, 'test') });
    let operations: Operation[] = [];
    let session = '';
    let known: (template: string, name: string) => string | undefined = () => undefined;

    beforeAll(async () => {
      const creator = await newCreator(fx.request);
      session = creator.token;
      const skill = await json<{ id: string; slug: string }>(await creator.register());
      const group = await creator.group();
      const hook = await json<{ id: string }>(
        await fx.request('/webhooks', jsonPost({ url: 'http://127.0.0.1:9/hooks', events: ['call.paid'] }, bearer(session))),
      );
      await fx.request(`/webhooks/${hook.id}/test`, jsonPost({}, bearer(session)));
      const [delivery] = await json<{ id: string }[]>(await fx.request(`/webhooks/${hook.id}/deliveries`, { headers: bearer(session) }));
      known = (template, name) => {
        if (template.startsWith('/groups')) return name === 'slug' ? group.slug : undefined;
        if (template.startsWith('/webhooks')) return name === 'id' ? hook.id : name === 'deliveryId' ? delivery?.id : undefined;
        return { slug: skill.slug, skillId: skill.id, address: creator.address, creator: creator.address, group: group.slug }[name];
      };
      const doc = (await (await fx.request('/openapi.json')).json()) as {
        paths: Record<string, Record<string, { parameters?: Parameter[]; security?: unknown[]; requestBody?: any }>>;
      };
      for (const [template, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const parameters = (op.parameters ?? []).filter((p) => p.in === 'query' || p.in === 'path');
          if (parameters.length === 0) continue;
          operations.push({
            method: method.toUpperCase(),
            template,
            parameters,
            body: op.requestBody?.content?.['application/json']?.schema,
            secured: Array.isArray(op.security) && op.security.length > 0,
          });
        }
      }
      // Deletions last: the records they may delete serve the other operations first.
      operations = [...operations.filter((o) => o.method !== 'DELETE'), ...operations.filter((o) => o.method === 'DELETE')];
    });

    it('answers no value of any query or path parameter with a 5xx, and refuses in the error shape', async () => {
      expect(operations.length).toBeGreaterThanOrEqual(25);
      expect(operations.map((o) => `${o.method} ${o.template}`)).toContain('GET /analytics/revenue.csv');
      const statuses = await sweep(`the registry on ${kind}`, operations, known, fx.request, bearer(session));
      // The values reached the handlers: many taken, many refused, not only sign-in refusals. The
      // operators' routes refuse the sweep's session before they read a value: they take none.
      const open = operations.filter((o) => !o.template.startsWith('/operator/'));
      expect(statuses.ok).toBeGreaterThan(open.length * RUNS * 0.1);
      expect(statuses.invalid).toBeGreaterThan(operations.length * RUNS * 0.2);
      expect(statuses.unauthorized).toBe(0);
    }, 120_000);
  });
}

/** The facilitator's discovery queries (it publishes no OpenAPI document): their contract schemas. */
function queryOperations(routes: [string, { properties: Record<string, Schema> }][]): Operation[] {
  return routes.map(([template, schema]) => ({
    method: 'GET',
    template,
    parameters: Object.entries(schema.properties).map(([name, s]) => ({ name, in: 'query', schema: s })),
    secured: false,
  }));
}

describe('random values at every query parameter of the facilitator’s discovery', () => {
  let chain: LocalChain;
  const facilitators: [DatabaseKind, FacilitatorFixture][] = [];
  beforeAll(async () => {
    chain = await startChain({ payers: 1 });
    for (const kind of databaseKinds) facilitators.push([kind, await startFacilitatorFixture(chain, kind)]);
  }, 60_000);
  afterAll(async () => {
    for (const [, f] of facilitators) await f.close();
    await chain?.stop();
  });

  it('answers none with a 5xx, on each database, and refuses in the error shape', async () => {
    const operations = queryOperations([
      ['/discovery/resources', DiscoveryResourcesQuery],
      ['/discovery/search', DiscoverySearchQuery],
    ]);
    const known = (_: string, name: string) => ({ network: chain.network, payTo: chain.accounts.payer.address })[name];
    for (const [kind, f] of facilitators) {
      const request = (path: string, init?: RequestInit) => f.facilitator.app.handle(new Request(`http://localhost${path}`, init));
      const statuses = await sweep(`the facilitator on ${kind}`, operations, known, request, {});
      expect(statuses.ok).toBeGreaterThan(operations.length * RUNS * 0.1);
      expect(statuses.invalid).toBeGreaterThan(operations.length * RUNS * 0.2);
    }
  }, 120_000);
});
