/**
 * Registration against a real registry served on a port: auto-registration at start (groups
 * merged, concurrency bounded, restart applies changes), the manual register() and updateSkill().
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { register, serve, skill, updateSkill, type ServeOptions, type Skills } from 'skill-market/creator';
import { registryFixture } from '../support/registry';
import { json, newCreator, type Creator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { freePort } from '../support/process';
import { recordingLogger } from '../support/skill-server';

/** The skills' payment address, proven by the creator. */
const payee = privateKeyToAccount(generatePrivateKey());
const wallet = payee.address;

/** A fetch that counts POST /skills requests in flight and slows each a little so they overlap. */
function concurrencyMeter() {
  const meter = { inFlight: 0, max: 0, requests: 0 };
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const counted = String(input).endsWith('/skills') && init?.method === 'POST';
    if (!counted) return fetch(input, init);
    meter.requests++;
    meter.max = Math.max(meter.max, ++meter.inFlight);
    try {
      await Bun.sleep(15);
      return await fetch(input, init);
    } finally {
      meter.inFlight--;
    }
  }) as typeof fetch;
  return { meter, fetch: fetchFn };
}

for (const kind of oneDatabase) {
  describe(`registration against the registry (${kind})`, () => {
    const fx = registryFixture(kind, { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
    let apiUrl: string;
    let creator: Creator;
    let facilitatorUrl: string;

    beforeAll(async () => {
      fx.registry.app.listen({ hostname: '127.0.0.1', port: 0 });
      apiUrl = `http://127.0.0.1:${fx.registry.app.server!.port}`;
      facilitatorUrl = `http://127.0.0.1:${await freePort()}`; // nobody there: start-up only warns
      creator = await newCreator(fx.request);
      await creator.prove(payee);
      await creator.group('tools');
      await creator.group('text');
    });
    afterAll(async () => {
      await fx.registry.app.stop();
    });

    const skillAt = async (slug: string) => json(await fx.request(`/skills/${slug}`));
    const startServer = (skills: Skills, extra: Partial<ServeOptions>) =>
      serve(skills, {
        port: 0,
        hostname: '127.0.0.1',
        wallet,
        apiKey: creator.key,
        apiUrl,
        facilitatorUrl,
        trackCalls: false,
        logger: recordingLogger(),
        env: {},
        ...extra,
      });

    it('registers every skill at start with {endpoint}/<name>, merged groups, and at most batch.concurrency in flight', async () => {
      const skills: Skills = {
        echo: skill({ price: '$0.001', description: 'Echo', groups: ['text', ' tools '], inputSchema: { type: 'object' } }, (i) => i),
        ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`plain${i}`, skill({ price: '$0.002' }, () => i)])),
      };
      const { meter, fetch } = concurrencyMeter();
      const server = await startServer(skills, {
        fetch,
        register: { endpoint: 'http://skills.test:8080/', groups: [' tools', 'tools ', ''], batch: { concurrency: 2 } },
      });
      try {
        expect(server.registration).toHaveLength(6);
        expect(server.registration.every((r) => r.success && r.slug && r.skillId)).toBe(true);
        expect(meter.requests).toBe(6);
        expect(meter.max).toBe(2);
        const echo = await skillAt(server.registration[0]!.slug!);
        expect(echo).toMatchObject({
          name: 'echo',
          endpoint: 'http://skills.test:8080/echo',
          price: '$0.001',
          paymentAddress: wallet,
          description: 'Echo',
          inputSchema: { type: 'object' },
        });
        expect([...echo.groups].sort()).toEqual(['text', 'tools']);
        expect((await skillAt(server.registration[1]!.slug!)).groups).toEqual(['tools']);
      } finally {
        await server.stop();
      }
    });

    it('keeps to the default concurrency of 5', async () => {
      const skills = Object.fromEntries(
        Array.from({ length: 8 }, (_, i) => [`many${i}`, skill({ price: '$0.001', groups: ['tools'] }, () => i)]),
      );
      const { meter, fetch } = concurrencyMeter();
      const server = await startServer(skills, { fetch, register: { endpoint: 'http://skills.test' } });
      await server.stop();
      expect(server.registration.every((r) => r.success)).toBe(true);
      expect(meter.max).toBe(5);
    });

    it('re-registers on restart and applies changed price, description and schemas under the same slug', async () => {
      const first = await startServer(
        { evolving: skill({ price: '$0.001', description: 'v1', groups: ['tools'] }, () => 1) },
        { register: { endpoint: 'http://skills.test' } },
      );
      await first.stop();
      const second = await startServer(
        { evolving: skill({ price: '$0.005', description: 'v2', groups: ['text'], outputSchema: { type: 'integer' } }, () => 2) },
        { register: { endpoint: 'http://skills-v2.test' } },
      );
      await second.stop();
      expect(second.registration[0]!.slug).toBe(first.registration[0]!.slug!);
      expect(await skillAt(second.registration[0]!.slug!)).toMatchObject({
        price: '$0.005',
        description: 'v2',
        endpoint: 'http://skills-v2.test/evolving',
        outputSchema: { type: 'integer' },
        groups: ['text'],
      });
    });

    it('lists a skill defined with upto as usage-based, and at a flat price again once its definition drops it', async () => {
      const [byUse] = await register(
        { metered: skill({ price: '$0.01', upto: true, groups: ['tools'] }, () => 1) },
        { apiKey: creator.key, apiUrl, paymentAddress: wallet, endpoint: 'http://skills.test' },
      );
      expect(await skillAt(byUse!.slug!)).toMatchObject({ price: '$0.01', usageBased: true });
      const [flat] = await register(
        { metered: skill({ price: '$0.01', groups: ['tools'] }, () => 1) },
        { apiKey: creator.key, apiUrl, paymentAddress: wallet, endpoint: 'http://skills.test' },
      );
      expect(flat!.slug).toBe(byUse!.slug!);
      expect(await skillAt(flat!.slug!)).toMatchObject({ usageBased: false });
      expect(await updateSkill(flat!.slug!, { usageBased: true }, { apiKey: creator.key, apiUrl })).toEqual({ success: true });
      expect(await skillAt(flat!.slug!)).toMatchObject({ usageBased: true });
      expect((await updateSkill(flat!.slug!, { usageBased: 'yes' } as never, { apiKey: creator.key, apiUrl })).error).toBe(
        'usageBased must be true or false',
      );
    });

    it('gives a skill without any group a failure without asking the registry, and reports the registry’s refusal', async () => {
      const { meter, fetch } = concurrencyMeter();
      const results = await register(
        { lonely: skill({ price: '$0.001' }, () => 1), stranger: skill({ price: '$0.001', groups: ['not-mine'] }, () => 1) },
        { apiKey: creator.key, apiUrl, paymentAddress: wallet, endpoint: 'http://skills.test', fetch, retry: { baseDelayMs: 1 } },
      );
      expect(results[0]).toEqual({
        name: 'lonely',
        success: false,
        error: 'no groups: give the skill groups or pass register groups (at least one is required)',
      });
      expect(results[1]!.success).toBe(false);
      expect(results[1]!.error).toBe(
        'Registry registration of stranger failed with 400: Group not found: "not-mine" is not one of your groups (create it first with POST /groups)',
      );
      expect(meter.requests).toBe(1); // a 400 is not retried
    });

    it('returns a failure per skill for a bad key or bad options, never throwing', async () => {
      const skills = {
        a: skill({ price: '$0.001', groups: ['tools'] }, () => 1),
        b: skill({ price: '$0.001', groups: ['tools'] }, () => 1),
      };
      const bad = await register(skills, { apiKey: 'sk_unknown', apiUrl, paymentAddress: wallet, endpoint: 'http://skills.test' });
      expect(bad.map((r) => r.success)).toEqual([false, false]);
      expect(bad[0]!.error).toContain('failed with 401: Invalid token');
      expect(
        (await register(skills, { apiKey: creator.key, apiUrl, paymentAddress: 'nope', endpoint: 'http://s.test' }))[0]!.error,
      ).toContain('paymentAddress must be a 42-character');
      expect((await register(skills, { apiKey: creator.key, apiUrl, paymentAddress: wallet, endpoint: 'not a url' }))[0]!.error).toContain(
        'endpoint must be an absolute http(s) URL',
      );
    });

    it('updates a skill: price, description, isActive, and groups replacing all of them', async () => {
      const [registered] = await register(
        { editable: skill({ price: '$0.001', groups: ['tools', 'text'] }, () => 1) },
        { apiKey: creator.key, apiUrl, paymentAddress: wallet, endpoint: 'http://skills.test' },
      );
      const slug = registered!.slug!;
      expect(
        await updateSkill(
          slug,
          { price: '$0.25', description: 'Edited', groups: ['text'], isActive: false },
          { apiKey: creator.key, apiUrl },
        ),
      ).toEqual({ success: true });
      expect(await skillAt(slug)).toMatchObject({ price: '$0.25', description: 'Edited', groups: ['text'], isActive: false });
      expect(await updateSkill(slug, { groups: [] }, { apiKey: creator.key, apiUrl })).toEqual({
        success: false,
        error: 'groups may not be empty (they replace all groups of the skill)',
      });
      expect((await updateSkill(slug, { price: '1,00' }, { apiKey: creator.key, apiUrl })).error).toContain('price');
      expect((await updateSkill(slug, { inputSchema: { type: 'wrong' } }, { apiKey: creator.key, apiUrl })).error).toContain(
        'inputSchema is not a usable JSON Schema',
      );
      expect((await updateSkill(slug, { colour: 'red' } as never, { apiKey: creator.key, apiUrl })).error).toBe('unknown field "colour"');
      expect((await updateSkill('no-such-skill', { isActive: true }, { apiKey: creator.key, apiUrl })).error).toContain(
        'failed with 404: Skill not found',
      );
    });
  });
}

describe('the registry client trusts no server', () => {
  const skills = { a: skill({ price: '$0.001', groups: ['g'] }, () => 1) };
  const base = {
    apiKey: 'sk_x',
    apiUrl: 'http://registry.test',
    paymentAddress: wallet,
    endpoint: 'http://s.test',
    retry: { baseDelayMs: 1 },
  };
  const scripted = (answers: (() => Response)[]) => {
    let calls = 0;
    const fetchFn = (async () => answers[Math.min(calls++, answers.length - 1)]!()) as unknown as typeof fetch;
    return { fetch: fetchFn, calls: () => calls };
  };
  const jsonResponse =
    (status: number, body: unknown, headers: Record<string, string> = {}) =>
    () =>
      new Response(JSON.stringify(body), { status, headers });

  it('retries 429 and 5xx with back-off, then succeeds', async () => {
    const s = scripted([
      jsonResponse(503, { error: 'down' }),
      jsonResponse(429, { error: 'slow down' }, { 'retry-after': '0' }),
      jsonResponse(201, { slug: 'a', id: 'id-1' }),
    ]);
    expect(await register(skills, { ...base, fetch: s.fetch })).toEqual([{ name: 'a', success: true, slug: 'a', skillId: 'id-1' }]);
    expect(s.calls()).toBe(3);
  });

  it('gives up after the attempts and reads the error from message, then error', async () => {
    const s = scripted([jsonResponse(500, { message: 'from message', error: 'from error' })]);
    expect((await register(skills, { ...base, fetch: s.fetch }))[0]!.error).toBe(
      'Registry registration of a failed with 500: from message',
    );
    expect(s.calls()).toBe(3);
    const t = scripted([jsonResponse(403, { error: 'API key revoked' })]);
    expect((await register(skills, { ...base, fetch: t.fetch }))[0]!.error).toBe(
      'Registry registration of a failed with 403: API key revoked',
    );
    expect(t.calls()).toBe(1);
  });

  it('refuses a success answer without a usable slug', async () => {
    for (const body of [{}, { slug: 42 }, [], 'text', { slug: 'ok', id: 7 }]) {
      const s = scripted([jsonResponse(200, body)]);
      expect((await register(skills, { ...base, fetch: s.fetch }))[0]!.error).toContain('The registry answered an invalid skill');
    }
    const html = scripted([() => new Response('<html>proxy</html>', { status: 200 })]);
    expect((await register(skills, { ...base, fetch: html.fetch }))[0]!.error).toContain('<html>proxy</html>');
  });
});
