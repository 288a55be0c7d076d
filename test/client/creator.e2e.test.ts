/**
 * End to end with the creator SDK: a skill server started with serve() registers itself with the
 * registry, and our client pays it on the local chain through our facilitator, in both modes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { InputValidationError, SkillCallError, type FetchLike } from 'skill-market';
import { freePort } from '../support/process';
import { countingAccount, NETWORK, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 10_000n;
let server: SkillServer;
let payee: Address;
const slugs: Record<string, string> = {};
let runs = 0;

const skills = {
  shout: skill(
    {
      price: '$0.01',
      description: 'Upper-cases text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    ({ text }: { text: string }) => {
      runs++;
      return { shout: text.toUpperCase() };
    },
  ),
  broken: skill({ price: '$0.01', description: 'Always fails' }, () => {
    throw new Error('no shouting on Sundays');
  }),
};

beforeAll(async () => {
  payee = await world.payee();
  const port = await freePort();
  server = await serve(skills, {
    port,
    hostname: '127.0.0.1',
    wallet: payee,
    facilitatorUrl: world.facilitatorUrl,
    network: NETWORK,
    asset: world.asset,
    apiKey: world.creator.key,
    apiUrl: world.registryUrl,
    register: { endpoint: `http://127.0.0.1:${port}`, groups: [world.group], onError: 'throw' },
    logger: { info() {}, warn() {}, error() {} },
    env: {},
  });
  for (const r of server.registration) slugs[r.name] = r.slug!;
});

afterAll(() => server?.stop());

describe('our client against a serve() skill server', () => {
  it('pays in both modes: the unwrapped result, a receipt, usage recorded, exactly the price moved each time', async () => {
    const payer = await world.payer();
    const before = await world.chain.balanceOf(payee);
    const market = world.market({ wallet: payer });
    const standard = await market.callWithReceipt(slugs.shout!, { text: 'hi' });
    const fast = await market.callWithReceipt(slugs.shout!, { text: 'there' }, { mode: 'fast' });
    expect([standard.result, fast.result]).toEqual([{ shout: 'HI' }, { shout: 'THERE' }]);
    for (const { receipt } of [standard, fast])
      expect(receipt).toMatchObject({
        amount: '10000',
        payTo: payee,
        network: NETWORK,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
    expect(await world.chain.balanceOf(payee)).toBe(before + 2n * PRICE);
    await market.flush();
    const refs = (await world.usage(standard.skill.id)).map((u) => u.paymentRef);
    expect(refs).toEqual(expect.arrayContaining([standard.receipt!.transaction, fast.receipt!.transaction]));
  });

  it('refuses input the registered inputSchema rejects, before any request or signature', async () => {
    const payer = countingAccount(await world.payer());
    const error = await world
      .market({ wallet: payer })
      .call(slugs.shout!, { text: 42 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputValidationError);
    expect(payer.signatures).toBe(0);
  });

  it('brings a handler error back as SkillCallError with its message, and nothing is charged', async () => {
    const payer = await world.payer();
    const before = await world.chain.balanceOf(payer.address);
    const error = await world
      .market({ wallet: payer })
      .call(slugs.broken!, {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SkillCallError);
    expect(error).toMatchObject({ code: 'skill_failed', status: 500, charged: 'no', message: 'no shouting on Sundays' });
    expect(await world.chain.balanceOf(payer.address)).toBe(before);
  });

  it('gets the stored answer when the answer to a proof is lost: the same proof again, one run, one transfer', async () => {
    const payer = countingAccount(await world.payer());
    const before = await world.chain.balanceOf(payer.address);
    const runsBefore = runs;
    let lost = 0;
    const losingFetch: FetchLike = async (input, init) => {
      const res = await fetch(input, init);
      const proof = new Headers(init?.headers).get('x-payment');
      if (proof && lost === 0) {
        lost++;
        await res.arrayBuffer();
        throw new TypeError('fetch failed: connection reset');
      }
      return res;
    };
    const { result, receipt } = await world.market({ wallet: payer, fetch: losingFetch }).callWithReceipt(slugs.shout!, { text: 'again' });
    expect(result).toEqual({ shout: 'AGAIN' });
    expect(receipt!.transaction).toMatch(/^0x/);
    expect(lost).toBe(1);
    expect(payer.signatures).toBe(1);
    expect(runs - runsBefore).toBe(1);
    expect(await world.chain.balanceOf(payer.address)).toBe(before - PRICE);
  });
});
