/**
 * Our consumer client (SkillMarket with payment 'channel') pays the reference `batch-settlement`
 * server (@x402/hono with @x402/evm's server scheme) that settles through OUR facilitator, which
 * holds the channel's receiver authorizer: one deposit, then vouchers; the server's claim and
 * settle through us put calls × price in the receiver's wallet. The registry and the facilitator
 * share the client tests' embedded database (test/client/support/world.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { Skill } from 'skill-market';
import type { Address } from 'viem';
import { useWorld } from '../../client/support/world';
import { PRICE, referenceServer } from './support';

const world = useWorld({ chain: true });
let server: ReturnType<typeof referenceServer>;
let skill: Skill;
let payee: Address;

beforeAll(async () => {
  payee = await world.payee();
  const name = `channel-${crypto.randomUUID().slice(0, 8)}`;
  server = referenceServer(world.chain, new HTTPFacilitatorClient({ url: world.facilitatorUrl }), payee, {
    method: 'POST',
    path: `/${name}`,
  });
  const res = await world.creator.register({
    name,
    endpoint: server.url,
    price: '$0.001',
    paymentAddress: payee,
    network: world.chain.network,
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  skill = (await res.json()) as Skill;
}, 60_000);
afterAll(() => server?.stop());

describe('our client paying a reference batch-settlement server through our facilitator', () => {
  it('deposits once, pays with vouchers, and the server claims and settles through us: the receiver holds calls × price', async () => {
    const payer = await world.payer();
    const market = world.market({ wallet: payer, payment: 'channel', maxDeposit: '$0.01', rpcUrl: world.chain.rpcUrl });
    const first = await market.callWithReceipt(skill.slug, { i: 1 });
    expect(first.result).toEqual({ data: 1 });
    expect(first.receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/); // the deposit, sent by our relayer
    for (let i = 2; i <= 4; i++) {
      const { receipt } = await market.callWithReceipt(skill.slug, { i });
      expect(receipt).toMatchObject({ amount: `${PRICE}`, transaction: null });
    }
    expect(server.state.handled).toBe(4);
    expect((await market.channels())[0]).toMatchObject({ receiver: payee, deposit: `${10n * PRICE}`, charged: `${4n * PRICE}` });

    const [claimed] = await server.manager.claim();
    expect(claimed).toMatchObject({ vouchers: 1 });
    await server.manager.settle();
    expect(await world.chain.balanceOf(payee)).toBe(4n * PRICE);
  });
});
