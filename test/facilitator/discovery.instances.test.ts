/**
 * Facilitator instances sharing one PostgreSQL database split their Bazaar catalogue's live 402
 * reads: passes running at once on both read each due resource once, never twice. Needs
 * TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { encodeBase64Json } from 'skill-market/x402';
import { type LocalChain, startChain } from '../support/chain';
import { TEST_DATABASE_URL } from '../support/database';
import { paymentBody, requirementsFor, startTwoInstances } from '../support/facilitator';

const RESOURCES = 6;
const schema = {
  type: 'object',
  properties: { input: { type: 'object', properties: { type: { const: 'http' } }, required: ['type'] } },
  required: ['input'],
};

describe.skipIf(!TEST_DATABASE_URL)('two facilitator instances reading live 402s', () => {
  let chain: LocalChain;
  let instances: Awaited<ReturnType<typeof startTwoInstances>>;
  const reads = new Map<string, number>();
  let server: ReturnType<typeof Bun.serve>;
  beforeAll(async () => {
    chain = await startChain({ payers: 1, relayers: 2 });
    instances = await startTwoInstances(chain);
    const payee = (await chain.createAccount()).address;
    const accepts = [{ ...requirementsFor(chain, payee), maxTimeoutSeconds: 300 }];
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request) {
        const path = new URL(request.url).pathname;
        reads.set(path, (reads.get(path) ?? 0) + 1);
        await Bun.sleep(20); // answers slowly enough for the two passes to overlap
        return new Response('{}', {
          status: 402,
          headers: { 'PAYMENT-REQUIRED': encodeBase64Json({ x402Version: 2, resource: { url: request.url }, accepts }) },
        });
      },
    });
  }, 60_000);
  afterAll(async () => {
    server?.stop(true);
    await instances?.close();
    await chain?.stop();
  });

  it('read each due resource once between them', async () => {
    const { a, b } = instances;
    for (let n = 0; n < RESOURCES; n++) {
      const body = await paymentBody(chain, chain.accounts.payer, requirementsFor(chain, (await chain.createAccount()).address));
      const url = `http://127.0.0.1:${server.port}/harbour-${n}`;
      const declared = {
        ...body,
        paymentPayload: {
          ...body.paymentPayload,
          resource: { url },
          extensions: { bazaar: { info: { input: { type: 'http' } }, schema } },
        },
      };
      expect((await a.facilitator.verify(declared)).isValid).toBe(true);
    }
    await a.facilitator.refreshCatalogue();
    expect([...reads.values()]).toEqual(Array<number>(RESOURCES).fill(1));

    // Every resource due again at once (as after the refresh interval), both instances pass together.
    await a.database.db.execute(sql`update facilitator_resources set checked_at = null`);
    const [one, two] = await Promise.all([a.facilitator.refreshCatalogue(), b.facilitator.refreshCatalogue()]);
    expect(one.read + two.read).toBe(RESOURCES);
    expect(one.live + two.live).toBe(RESOURCES);
    expect([...reads.values()]).toEqual(Array<number>(RESOURCES).fill(2));
  });
});
