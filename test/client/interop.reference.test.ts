/**
 * Our client pays a paywalled endpoint of the reference x402 server (@x402/hono on Bun.serve,
 * settling through our facilitator) on the local chain, in both payment modes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import type { Address } from 'viem';
import type { Skill } from 'skill-market';
import { countingAccount, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 10_000n;
let server: ReturnType<typeof Bun.serve>;
let payee: Address;
let skill: Skill;
const seen: { proof: string | null; status: number }[] = [];

beforeAll(async () => {
  payee = (await world.chain.createAccount()).address;
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: world.facilitatorUrl })).register(
    world.chain.network,
    new ExactEvmScheme(),
  );
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    seen.push({ proof: c.req.header('payment-signature') ?? null, status: c.res.status });
  });
  app.use(
    paymentMiddleware(
      {
        'POST /forecast': {
          accepts: {
            scheme: 'exact',
            network: world.chain.network,
            payTo: payee,
            price: {
              amount: PRICE.toString(),
              asset: world.chain.token.address,
              extra: { name: world.chain.token.name, version: world.chain.token.version },
            },
          },
          description: 'Weather forecast',
        },
      },
      resourceServer,
    ),
  );
  app.post('/forecast', async (c) => {
    const { city } = (await c.req.json()) as { city: string };
    return c.json({ city, forecast: 'sunny' });
  });
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  const res = await world.creator.register({
    name: 'forecast',
    endpoint: `http://127.0.0.1:${server.port}/forecast`,
    price: '$0.01',
    paymentAddress: payee,
    network: world.chain.network,
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  skill = (await res.json()) as Skill;
});

afterAll(() => server?.stop(true));

describe('the reference x402 server (@x402/hono)', () => {
  it('is paid by our client from its PAYMENT-REQUIRED header: the handler JSON comes back and exactly the price moves', async () => {
    const payer = await world.payer();
    const [payerBefore, payeeBefore] = await Promise.all([world.chain.balanceOf(payer.address), world.chain.balanceOf(payee)]);
    const { result, receipt } = await world.market({ wallet: payer }).callWithReceipt(skill.slug, { city: 'Lyon' });
    expect(result).toEqual({ city: 'Lyon', forecast: 'sunny' });
    expect(receipt).toMatchObject({ amount: '10000', payTo: payee, network: world.chain.network, payer: payer.address });
    expect(receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await world.chain.balanceOf(payer.address)).toBe(payerBefore - PRICE);
    expect(await world.chain.balanceOf(payee)).toBe(payeeBefore + PRICE);
  });

  it('is paid in fast mode: one fallback to its 300 s terms with the same nonce, then one round trip per call', async () => {
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(payee);
    const market = world.market({ wallet: payer, mode: 'fast' });
    const start = seen.length;
    expect(await market.call(skill.slug, { city: 'Nice' })).toEqual({ city: 'Nice', forecast: 'sunny' });
    expect(seen.slice(start).map((s) => s.status)).toEqual([402, 200]);
    expect(await market.call(skill.slug, { city: 'Brest' })).toEqual({ city: 'Brest', forecast: 'sunny' });
    expect(seen.slice(start).map((s) => s.status)).toEqual([402, 200, 200]);
    expect(seen.slice(start).every((s) => s.proof !== null)).toBe(true);
    expect(payer.signatures).toBe(3);
    expect(await world.chain.balanceOf(payee)).toBe(before + 2n * PRICE);
  });
});
