/**
 * Our client (`payment: 'upto'`) pays a usage-based route of the reference x402 server (@x402/hono
 * with @x402/evm's upto server scheme; its handler names the charge with setSettlementOverrides):
 * settled through our facilitator, and through @x402/evm's own upto facilitator, so the authorization
 * our client signs is the one the reference accepts. Exactly the charge moves, and the receipt says
 * so; a wallet that never approved Permit2 is told how to fix it, and nothing moves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { x402Facilitator } from '@x402/core/facilitator';
import { type FacilitatorClient, HTTPFacilitatorClient } from '@x402/core/server';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { UptoEvmScheme as UptoFacilitatorScheme } from '@x402/evm/upto/facilitator';
import { UptoEvmScheme as UptoServerScheme } from '@x402/evm/upto/server';
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import { type Address, publicActions } from 'viem';
import type { Skill } from 'skill-market';
import { approvePermit2 } from '../support/chain/upto';
import { PERMIT2_ADDRESS } from '../../src/chain/upto';
import { useWorld } from './support/world';

const world = useWorld({ chain: true });
const MAX = 10_000n; // $0.01, the listed price
const servers: ReturnType<typeof Bun.serve>[] = [];

/** `POST /<name>` behind @x402/hono's upto route (maximum $0.01) settling through `facilitator`; the handler charges `units` × 100. Listed as `name`. */
async function serveMetered(name: string, facilitator: FacilitatorClient): Promise<{ skill: Skill; payee: Address }> {
  const payee = await world.payee();
  const resourceServer = new x402ResourceServer(facilitator).register(world.chain.network, new UptoServerScheme());
  const app = new Hono();
  app.use(
    paymentMiddleware(
      {
        [`POST /${name}`]: {
          accepts: {
            scheme: 'upto',
            network: world.chain.network,
            payTo: payee,
            price: {
              amount: MAX.toString(),
              asset: world.chain.token.address,
              extra: { name: world.chain.token.name, version: world.chain.token.version },
            },
          },
          description: 'Metered work',
        },
      },
      resourceServer,
    ),
  );
  app.post(`/${name}`, async (c) => {
    const { units } = (await c.req.json()) as { units: number };
    setSettlementOverrides(c, { amount: String(units * 100) });
    return c.json({ units });
  });
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  servers.push(server);
  const res = await world.creator.register({
    name,
    endpoint: `http://127.0.0.1:${server.port}/${name}`,
    price: '$0.01',
    paymentAddress: payee,
    network: world.chain.network,
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return { skill: (await res.json()) as Skill, payee };
}

let ours: { skill: Skill; payee: Address };
let reference: { skill: Skill; payee: Address };

beforeAll(async () => {
  ours = await serveMetered('metered-ours', new HTTPFacilitatorClient({ url: world.facilitatorUrl }));
  // @x402/evm's own upto facilitator, in process, sending from its own relayer.
  const relayer = await world.chain.createAccount();
  const client = world.chain.walletClient(relayer).extend(publicActions);
  const facilitator = new x402Facilitator().register(
    world.chain.network,
    new UptoFacilitatorScheme(
      toFacilitatorEvmSigner({ ...client, address: relayer.address } as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]),
    ),
  );
  reference = await serveMetered('metered-reference', {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as Awaited<ReturnType<FacilitatorClient['getSupported']>>,
  });
});

afterAll(async () => {
  for (const server of servers) await server.stop(true);
});

describe("our client paying @x402/hono's upto route", () => {
  for (const [label, target] of [
    ['through our facilitator', () => ours],
    ["through @x402/evm's upto facilitator", () => reference],
  ] as const) {
    it(`pays the handler's charge, less than the maximum, ${label}: exactly that moves and the receipt says so`, async () => {
      const { skill, payee } = target();
      const payer = await world.payer(100_000n);
      await approvePermit2(world.chain, payer);
      const payeeBefore = await world.chain.balanceOf(payee);

      const { result, receipt } = await world.market({ wallet: payer, payment: 'upto' }).callWithReceipt(skill.slug, { units: 37 });

      expect(result).toEqual({ units: 37 });
      expect(receipt).toMatchObject({ scheme: 'upto', amount: '3700', payTo: payee, payer: payer.address, network: world.chain.network });
      expect(receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await world.chain.balanceOf(payer.address)).toBe(100_000n - 3_700n);
      expect(await world.chain.balanceOf(payee)).toBe(payeeBefore + 3_700n);
    });
  }

  it('tells a wallet that never approved Permit2 how to fix it, and moves nothing', async () => {
    const payer = await world.payer(100_000n);
    const error = (await world
      .market({ wallet: payer, payment: 'upto' })
      .call(ours.skill.slug, { units: 1 })
      .catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain('permit2_allowance_required');
    expect(error.message).toContain(PERMIT2_ADDRESS);
    expect(await world.chain.balanceOf(payer.address)).toBe(100_000n);
  });
});
