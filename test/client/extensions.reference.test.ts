/**
 * Our client echoes the extensions a 402 declares into its payment payload, as `@x402/fetch`
 * does: the reference server (`@x402/hono` with the `bazaar` extension of `@x402/extensions`
 * declared on its route, settling through our facilitator) receives the declaration back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { x402ResourceServer } from '@x402/hono';
import type { Address } from 'viem';
import type { Skill } from 'skill-market';
import { serveForecast } from './support/reference-server';
import { useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 10_000n;
let server: ReturnType<typeof Bun.serve>;
let payee: Address;
let skill: Skill;
/** The PAYMENT-SIGNATURE headers the server received, decoded. */
const proofs: Record<string, unknown>[] = [];
const decoded = (header: string): unknown => JSON.parse(Buffer.from(header, 'base64').toString('utf8'));

beforeAll(async () => {
  payee = await world.payee();
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: world.facilitatorUrl }))
    .register(world.chain.network, new ExactEvmScheme())
    .registerExtension(bazaarResourceServerExtension);
  ({ server, skill } = await serveForecast(world, resourceServer, {
    payee,
    price: PRICE,
    observe: async (c, next) => {
      const proof = c.req.header('payment-signature');
      if (proof) proofs.push(decoded(proof) as Record<string, unknown>);
      await next();
    },
    extensions: declareDiscoveryExtension({
      bodyType: 'json',
      input: { city: 'Lyon' },
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      output: { example: { city: 'Lyon', forecast: 'sunny' } },
    }),
  }));
});

afterAll(() => server?.stop(true));

describe('extensions a 402 declares', () => {
  it('go back verbatim in the payment payload, and the server takes it', async () => {
    const unpaid = await fetch(skill.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"city":"Lyon"}',
    });
    expect(unpaid.status).toBe(402);
    const declared = (decoded(unpaid.headers.get('payment-required')!) as { extensions?: Record<string, unknown> }).extensions;
    expect(Object.keys(declared ?? {})).toEqual(['bazaar']);

    const payer = await world.payer();
    expect(await world.market({ wallet: payer }).call(skill.slug, { city: 'Lyon' })).toEqual({ city: 'Lyon', forecast: 'sunny' });
    expect(proofs).toHaveLength(1);
    expect(proofs[0]!.extensions).toEqual(declared!);
  });
});
