/**
 * A skill served by `serve()` and listed in no registry gets into our facilitator's Bazaar from
 * one paid call by our client: the 402 declares `bazaar`, the client echoes it in its payment, the
 * facilitator catalogues what it verified and settled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { PaymentPipeline, readAllowedAssets, toPaymentSigner } from 'skill-market/client';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { tallyListing } from '../support/schemes/tally-client';
import { localServeOptions, recordingLogger, startPaymentStack, type PaymentStack } from '../support/skill-server';

let stack: PaymentStack;
let server: SkillServer;
let payee: `0x${string}`;
const inputSchema = { type: 'object', properties: { harbour: { type: 'string' } }, required: ['harbour'] };

beforeAll(async () => {
  stack = await startPaymentStack({ payers: 1 });
  payee = (await stack.chain.createAccount()).address;
  const tides = skill(
    { price: '$0.02', description: 'Tide times of a harbour', inputSchema, groups: ['sea'] },
    (input: { harbour: string }) => ({
      harbour: input.harbour,
      high: '06:12',
    }),
  );
  server = await serve({ tides }, localServeOptions(stack.chain, stack.facilitator, payee, recordingLogger(), { serviceName: 'Tide Co' }));
}, 180_000);
afterAll(async () => {
  await server?.stop();
  await stack?.close();
});

const listed = async () =>
  ((await (await stack.facilitator.get(`/discovery/resources?payTo=${payee}`)).json()) as { items: Record<string, any>[] }).items;

describe('a skill server no registry lists, in a facilitator’s Bazaar', () => {
  it('is catalogued after one paid call by our client, with its declaration and service metadata', async () => {
    expect(await listed()).toEqual([]);
    const endpoint = `${server.url}/tides`;
    const pipeline = new PaymentPipeline({
      network: stack.chain.network,
      signer: toPaymentSigner(stack.chain.accounts.payer),
      policy: { allowed: readAllowedAssets([{ network: stack.chain.network, ...stack.asset }]) },
    });
    const listing = { ...tallyListing(endpoint, payee, 20_000n), network: stack.chain.network, inputSchema };
    const { result } = await pipeline.call(listing, { harbour: 'Brest' });
    expect(result).toEqual({ harbour: 'Brest', high: '06:12' });

    const items = await listed();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      resource: endpoint,
      type: 'http',
      description: 'Tide times of a harbour',
      serviceName: 'Tide Co',
      tags: ['sea'],
      accepts: [{ scheme: 'exact', amount: '20000', payTo: payee, network: stack.chain.network }],
      extensions: { bazaar: { info: { input: { type: 'http', method: 'POST', bodyType: 'json', body: { harbour: 'example' } } } } },
    });
    expect(items[0]!.extensions.bazaar.schema.properties.input.properties.body).toEqual(inputSchema);
  });
});
