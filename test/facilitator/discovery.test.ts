/**
 * What the facilitator's Bazaar catalogues from the payments it verifies: only a declaration whose
 * `info` satisfies its own schema, only from a payment that passed; each outcome reported in the
 * EXTENSION-RESPONSES header; MCP tools by URL and tool name; hostile metadata dropped; the terms
 * listed read from the resource's live 402, on a loopback address only when private addresses are
 * allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { encodeBase64Json } from 'skill-market/x402';
import { type LocalChain, startChain } from '../support/chain';
import { oneDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1 });
}, 60_000);
afterAll(() => chain.stop());

const schema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    input: {
      type: 'object',
      properties: { type: { const: 'http' }, method: { enum: ['POST'] }, bodyType: { enum: ['json'] }, body: { type: 'object' } },
      required: ['type', 'method', 'bodyType', 'body'],
    },
  },
  required: ['input'],
};
const info = { input: { type: 'http', method: 'POST', bodyType: 'json', body: { word: 'tide' } } };
const mcpSchema = {
  type: 'object',
  properties: {
    input: { type: 'object', properties: { type: { const: 'mcp' }, toolName: { type: 'string' } }, required: ['type', 'toolName'] },
  },
  required: ['input'],
};

const sidechannel = (res: Response) => {
  const header = res.headers.get('extension-responses');
  return header === null ? null : JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
};

for (const kind of oneDatabase) {
  describe(`the facilitator's Bazaar catalogue (${kind} database)`, () => {
    let f: FacilitatorFixture;
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
    }, 60_000);
    afterAll(() => f.close());

    /** A valid payment to a fresh payee declaring `bazaar` for `url`, with resource metadata `resource`. */
    const declaring = async (url: string, bazaar: unknown, resource: Record<string, unknown> = {}) => {
      const payee = (await chain.createAccount()).address;
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, payee));
      return {
        payee,
        body: {
          ...body,
          paymentPayload: { ...body.paymentPayload, resource: { url, ...resource }, extensions: { bazaar } },
        },
      };
    };
    const listed = async (query = '') => (await (await f.get(`/discovery/resources${query}`)).json()) as { items: any[]; pagination: any };

    it('catalogues a valid payment’s declaration, says so in EXTENSION-RESPONSES, and keys it by URL without query', async () => {
      const { body, payee } = await declaring(
        'https://tides.example/forecast?harbour=Brest',
        { info, schema },
        {
          description: 'Tides',
          serviceName: 'Tide Co',
          tags: ['tides', 'TIDES', 'sea\u0007'],
          iconUrl: 'http://127.0.0.1/icon.png',
        },
      );
      const res = await f.post('/verify', body);
      expect(await res.json()).toMatchObject({ isValid: true });
      expect(sidechannel(res)).toEqual({ bazaar: { status: 'success' } });
      const items = (await listed(`?payTo=${payee}`)).items;
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({
        resource: 'https://tides.example/forecast',
        type: 'http',
        description: 'Tides',
        serviceName: 'Tide Co',
        tags: ['tides'],
        extensions: { bazaar: { info, schema } },
      });
      expect(items[0].iconUrl).toBeUndefined();
    });

    it('rejects a declaration whose info breaks its schema or whose schema refers outside itself, and lists neither', async () => {
      const broken = await declaring('https://broken.example/a', { info: { input: { type: 'http', method: 'GET' } }, schema });
      const res = await f.post('/verify', broken.body);
      expect(await res.json()).toMatchObject({ isValid: true });
      expect(sidechannel(res)).toEqual({ bazaar: { status: 'rejected', rejectedReason: 'info failed schema validation' } });
      const outside = await declaring('https://broken.example/b', { info, schema: { ...schema, $ref: 'https://evil.example/s.json' } });
      const refused = await f.post('/verify', outside.body);
      expect(sidechannel(refused)).toEqual({
        bazaar: { status: 'rejected', rejectedReason: 'schema refers outside itself ($ref and $id must start with #)' },
      });
      for (const payee of [broken.payee, outside.payee]) expect((await listed(`?payTo=${payee}`)).items).toEqual([]);
    });

    it('catalogues nothing from a payment that does not verify', async () => {
      const { body, payee } = await declaring('https://unpaid.example/x', { info, schema });
      const forged = { ...body, paymentRequirements: { ...body.paymentRequirements, amount: '1' } };
      const res = await f.post('/verify', {
        ...forged,
        paymentPayload: { ...forged.paymentPayload, accepted: forged.paymentRequirements },
      });
      expect(await res.json()).toMatchObject({ isValid: false });
      expect(sidechannel(res)).toBeNull();
      expect((await listed(`?payTo=${payee}`)).items).toEqual([]);
    });

    it('keys MCP tools by URL and tool name, and filters by type', async () => {
      const one = await declaring('https://mcp.example/mcp', { info: { input: { type: 'mcp', toolName: 'tides' } }, schema: mcpSchema });
      const two = await declaring('https://mcp.example/mcp', { info: { input: { type: 'mcp', toolName: 'winds' } }, schema: mcpSchema });
      for (const { body } of [one, two]) expect(sidechannel(await f.post('/verify', body))).toEqual({ bazaar: { status: 'success' } });
      const tools = (await listed('?type=mcp')).items.map((i) => i.extensions.bazaar.info.input.toolName);
      expect(tools.sort()).toEqual(['tides', 'winds']);
      expect((await listed('?extensions=payment-identifier')).items).toEqual([]);
    });

    it('lists a loopback resource’s live 402 only when private addresses are allowed, its paid terms otherwise', async () => {
      const requests: { method: string; body: string }[] = [];
      let offers: Record<string, unknown>[] = [];
      const server = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        fetch: async (request) => {
          requests.push({ method: request.method, body: await request.text() });
          const required = { x402Version: 2, resource: { url: request.url }, accepts: offers };
          return new Response('{}', { status: 402, headers: { 'PAYMENT-REQUIRED': encodeBase64Json(required) } });
        },
      });
      const closed = await startFacilitatorFixture(chain, kind, { config: { discoveryAllowPrivate: false } });
      try {
        const url = `http://127.0.0.1:${server.port}/harbours`;
        const { body, payee } = await declaring(url, { info, schema });
        offers = [
          { ...requirementsFor(chain, payee), maxTimeoutSeconds: 300, amount: '25000' },
          { ...requirementsFor(chain, payee), scheme: 'upto', amount: '50000' },
        ];
        expect(sidechannel(await closed.post('/verify', body))).toEqual({ bazaar: { status: 'success' } });
        await closed.facilitator.refreshCatalogue();
        expect(requests).toEqual([]);
        expect((await listed(`?payTo=${payee}`)).items).toEqual([]);
        const closedItems = (await (await closed.get(`/discovery/resources?payTo=${payee}`)).json()) as { items: any[] };
        expect(closedItems.items.map((i) => i.accepts)).toEqual([[body.paymentRequirements]]);

        expect(sidechannel(await f.post('/verify', body))).toEqual({ bazaar: { status: 'success' } });
        const items = await eventually(
          async () => (await listed(`?payTo=${payee}`)).items,
          (found) => found.length === 1 && found[0].accepts.length === 2,
          'the live 402 listed',
        );
        expect(items[0].accepts).toEqual(offers);
        expect(requests[0]).toEqual({ method: 'POST', body: '' });
      } finally {
        await closed.close();
        server.stop(true);
      }
    });

    it('pages search results by cursor', async () => {
      for (const n of [1, 2, 3]) {
        const { body } = await declaring(`https://paging.example/quasar-${n}`, { info, schema }, { description: `quasar number ${n}` });
        await f.post('/verify', body);
      }
      const page = async (cursor?: string) =>
        (await (await f.get(`/discovery/search?query=quasar&limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json()) as {
          resources: { resource: string }[];
          pagination: { cursor: string | null };
        };
      const first = await page();
      expect(first.resources).toHaveLength(2);
      const second = await page(first.pagination.cursor!);
      expect(second.resources).toHaveLength(1);
      expect(second.pagination.cursor).toBeNull();
      expect((await f.get('/discovery/search?query=quasar&cursor=abc')).status).toBe(400);
    });
  });
}
