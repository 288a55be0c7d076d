/**
 * Our client (`payment: 'upto'`) pays our own skill server's usage-based skill (`skill({ upto: true })`
 * served by serve(), settled through our facilitator): the handler's charge moves, the receipt names
 * it; a wallet without the Permit2 approval is refused by our facilitator (a 402) with the fix named.
 * A skill its creator does not sell by `exact` (`exact: false`) offers no `exact` in its 402: a
 * client that pays only `exact` is refused before it signs, and `upto` pays the charge.
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
let meteredOnly: Skill;
let payee: `0x${string}`;

beforeAll(async () => {
  payee = await world.payee();
  server = await serve(
    {
      measured: skill({ price: '$0.01', upto: true }, (input: { units: number }, { charge }) => {
        charge(BigInt(input.units) * 100n);
        return { units: input.units };
      }),
      metered: skill({ price: '$0.01', upto: true, exact: false }, (input: { units: number }, { charge }) => {
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
  const only = await world.creator.register({
    name: 'metered',
    endpoint: `${server.url}/metered`,
    price: '$0.01',
    paymentAddress: payee,
    network: world.chain.network,
  });
  if (only.status !== 201) throw new Error(`register: ${only.status} ${await only.text()}`);
  meteredOnly = (await only.json()) as Skill;
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

  it('a skill not sold by exact offers no exact: an exact-only client pays nothing, upto pays the charge', async () => {
    const probe = await fetch(`${server.url}/metered`, { method: 'POST' });
    expect(probe.status).toBe(402);
    const terms = JSON.parse(atob(probe.headers.get('payment-required')!)) as { accepts: { scheme: string }[] };
    expect(terms.accepts.map((a) => a.scheme)).toEqual(['upto']);
    const payer = await world.payer(100_000n);
    await approvePermit2(world.chain, payer);
    const refused = (await world
      .market({ wallet: payer, payment: 'exact' })
      .call(meteredOnly.slug, { units: 3 })
      .catch((e: unknown) => e)) as Error;
    expect((refused as Error & { code?: string }).code).toBe('terms_mismatch');
    expect(refused.message).toContain('the server asks for scheme upto');
    expect(await world.chain.balanceOf(payer.address)).toBe(100_000n);
    const { receipt } = await world.market({ wallet: payer, payment: 'upto' }).callWithReceipt(meteredOnly.slug, { units: 3 });
    expect(receipt).toMatchObject({ scheme: 'upto', amount: '300' });
    expect(await world.chain.balanceOf(payer.address)).toBe(99_700n);
  });
});
