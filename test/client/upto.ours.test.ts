/**
 * Our client (`payment: 'upto'`) pays our own skill server's usage-based skill (`skill({ upto: true })`
 * served by serve(), settled through our facilitator): the handler's charge moves, the receipt names
 * it; a wallet without the Permit2 approval is refused by our facilitator (a 402) with the fix named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Skill } from 'skill-market';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { PERMIT2_ADDRESS } from '../../src/chain/upto';
import { approvePermit2 } from '../support/chain/upto';
import { loopbackServeOptions } from '../support/skill-server';
import { useWorld } from './support/world';

const world = useWorld({ chain: true });
let server: SkillServer;
let listed: Skill;
let payee: `0x${string}`;

beforeAll(async () => {
  payee = await world.payee();
  server = await serve(
    {
      measured: skill({ price: '$0.01', upto: true }, (input: { units: number }, { charge }) => {
        charge(BigInt(input.units) * 100n);
        return { units: input.units };
      }),
    },
    loopbackServeOptions(world.chain, world.facilitatorUrl, payee),
  );
  const res = await world.creator.register({
    name: 'measured',
    endpoint: `${server.url}/measured`,
    price: '$0.01',
    paymentAddress: payee,
    network: world.chain.network,
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  listed = (await res.json()) as Skill;
});

afterAll(() => server?.stop());

describe('our client paying our skill server by upto', () => {
  it("pays the handler's charge: exactly that moves, and the receipt says so", async () => {
    const payer = await world.payer(100_000n);
    await approvePermit2(world.chain, payer);
    const payeeBefore = await world.chain.balanceOf(payee);
    const { result, receipt } = await world.market({ wallet: payer, payment: 'upto' }).callWithReceipt(listed.slug, { units: 42 });
    expect(result).toEqual({ units: 42 });
    expect(receipt).toMatchObject({ scheme: 'upto', amount: '4200', payTo: payee, payer: payer.address });
    expect(await world.chain.balanceOf(payer.address)).toBe(95_800n);
    expect(await world.chain.balanceOf(payee)).toBe(payeeBefore + 4_200n);
  });

  it('names the missing Permit2 approval when our facilitator refuses it, and moves nothing', async () => {
    const payer = await world.payer(100_000n);
    const error = (await world
      .market({ wallet: payer, payment: 'upto' })
      .call(listed.slug, { units: 1 })
      .catch((e: unknown) => e)) as Error & { code?: string };
    expect(error.code).toBe('payment_rejected');
    expect(error.message).toContain('permit2_allowance_required');
    expect(error.message).toContain(PERMIT2_ADDRESS);
    expect(await world.chain.balanceOf(payer.address)).toBe(100_000n);
  });
});
