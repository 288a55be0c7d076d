/**
 * Our client pays a paywalled endpoint of the reference x402 server (@x402/hono on Bun.serve,
 * settling through our facilitator) on the local chain, in both payment modes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { x402ResourceServer } from '@x402/hono';
import type { Address } from 'viem';
import type { Skill } from 'skill-market';
import { serveForecast } from './support/reference-server';
import { countingAccount, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 10_000n;
let server: ReturnType<typeof Bun.serve>;
let payee: Address;
let skill: Skill;
const seen: { proof: string | null; status: number }[] = [];

beforeAll(async () => {
  payee = await world.payee();
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: world.facilitatorUrl })).register(
    world.chain.network,
    new ExactEvmScheme(),
  );
  ({ server, skill } = await serveForecast(world, resourceServer, {
    payee,
    price: PRICE,
    observe: async (c, next) => {
      await next();
      seen.push({ proof: c.req.header('payment-signature') ?? null, status: c.res.status });
    },
  }));
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
