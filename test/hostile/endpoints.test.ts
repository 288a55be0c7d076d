/**
 * Endpoints that would turn a pasted command into another one: the registry refuses them at
 * registration and at re-registration (the update of an endpoint), 400 in the error shape naming
 * the field, and the SDK's register() refuses the same ones before sending anything.
 */
import { beforeAll, describe, expect, it } from 'bun:test';
import { register, skill } from 'skill-market/creator';
import { endpointProblem } from 'skill-market/registry';
import { json, newCreator, type Creator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';
import { expectRefusal } from './support';

const HOSTILE = [
  'https://skills.example.com/$(touch$IFS.pwned)',
  'https://skills.example.com/a;touch$IFS.pwned',
  'https://skills.example.com/a|touch$IFS.pwned',
  'https://skills.example.com/a&&touch$IFS.pwned',
  "https://skills.example.com/a'$(id)'",
  'https://skills.example.com/`id`',
  'https://skills.example.com/a&b',
  'https://skills.example.com/a>out',
  'https://skills.example.com/a\\b',
  'https://skills.example.com/a b',
  'https://skills.example.com/a\nb',
  'https://skills.example.com/a\tb',
  'https://skills.example.com/a\u0000b',
  'https://skills.example.com/a\u001b[2Jb',
  'https://skills.example.com/a\u00a0b',
  'https://skills.example.com/a\u202eb',
  ' https://skills.example.com/a',
  'https://skills.example.com/[x]',
  'https://skills.example.com/a#frag',
  'javascript:alert(1)//https://x',
  'ftp://skills.example.com/a',
  'https://user:pass@skills.example.com/a',
];

for (const kind of oneDatabase) {
  describe(`hostile endpoints on ${kind}`, () => {
    const fx = registryFixture(kind);
    let creator: Creator;
    let group: string;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
      group = (await creator.group()).name;
    });

    it('refuses each at registration with 400 naming the endpoint field, and stores nothing', async () => {
      for (const endpoint of HOSTILE) {
        const name = `h-${crypto.randomUUID().slice(0, 8)}`;
        const body = await expectRefusal(await creator.register({ name, endpoint, groups: [group] }), 400, 'VALIDATION');
        expect({ endpoint, error: body.error }).toMatchObject({ error: expect.stringContaining('field "endpoint"') });
        const mine = await json<{ name: string }[]>(
          await fx.request('/creators/me/skills', { headers: { authorization: `Bearer ${creator.key}` } }),
        );
        expect(mine.map((s) => s.name)).not.toContain(name);
      }
    });

    it('refuses each when a listed skill is registered again with it, and keeps the endpoint it had', async () => {
      const first = await creator.register({ name: 'steady', endpoint: 'https://skills.example.com/v1', groups: [group] });
      expect(first.status).toBe(201);
      const { slug } = await json<{ slug: string }>(first);
      for (const endpoint of HOSTILE) {
        const body = await expectRefusal(await creator.register({ name: 'steady', endpoint, groups: [group] }), 400, 'VALIDATION');
        expect(body.error).toContain('field "endpoint"');
      }
      expect((await json(await fx.request(`/skills/${slug}`))).endpoint).toBe('https://skills.example.com/v1/steady');
    });

    it('names what it found', async () => {
      const body = await expectRefusal(
        await creator.register({ endpoint: 'https://skills.example.com/$(touch$IFS.pwned)', groups: [group] }),
        400,
      );
      expect(body.error).toBe('Invalid request: field "endpoint": must not contain shell metacharacters (found $)');
    });

    it('still takes plain URLs: a port, a path, a query, percent escapes, an IPv6 host', async () => {
      for (const endpoint of [
        'https://skills.example.com:8443/v1/',
        'https://skills.example.com/~team/v1?key=abc,def',
        'https://skills.example.com/caf%C3%A9',
        'https://[2606:4700::1111]/x',
      ]) {
        const res = await creator.register({ endpoint, groups: [group] });
        expect({ endpoint, status: res.status }).toEqual({ endpoint, status: 201 });
      }
    });
  });
}

describe('register() in the SDK', () => {
  it('refuses the same endpoints before sending a request, in the registry’s words', async () => {
    for (const endpoint of HOSTILE.filter((e) => URL.canParse(e) && /^https?:/.test(e))) {
      const sent: string[] = [];
      const results = await register(
        { echo: skill({ price: '$0.001', groups: ['tools'] }, (input) => input) },
        {
          apiKey: 'sk_test',
          paymentAddress: '0x000000000000000000000000000000000000dEaD',
          endpoint,
          apiUrl: 'http://127.0.0.1:9',
          fetch: (async (url: string | URL) => {
            sent.push(String(url));
            return new Response('{}', { status: 500 });
          }) as typeof fetch,
        },
      );
      expect({ endpoint, sent }).toEqual({ endpoint, sent: [] });
      expect(results).toEqual([{ name: 'echo', success: false, error: expect.stringMatching(/^endpoint must /) }]);
      expect(results[0]!.error).toBe(`endpoint ${endpointProblem(endpoint.replace(/\/+$/, ''))}`);
    }
  });
});
