/**
 * Our client (`payment: 'upto'`) pays our own skill server's usage-based skill (`skill({ upto: true })`
 * served by serve(), settled through our facilitator): the handler's charge moves, the receipt names
 * it; a wallet without the Permit2 approval is refused by our facilitator (a 402) with the fix named.
 * A skill its creator does not sell by `exact` (`exact: false`) offers no `exact` in its 402: a
 * client that pays only `exact` is refused before it signs, and `upto` pays the charge. The CLI and
 * the MCP server say the most a call may cost before paying and what it was charged after; the MCP
 * budget holds the maximum while the call runs and keeps the charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Skill } from 'skill-market';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { PERMIT2_ADDRESS } from '../../src/chain/upto';
import { PersistentBudget } from '../../src/mcp/ledger';
import { textOf, tool } from '../mcp/support';
import { approvePermit2 } from '../support/chain/upto';
import { spawnMarket } from '../support/process';
import { loopbackServeOptions } from '../support/skill-server';
import { mcpClient } from './support/mcp';
import { useWorld } from './support/world';

const world = useWorld({ chain: true });
let server: SkillServer;
let listed: Skill;
let meteredOnly: Skill;
let payee: `0x${string}`;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'upto-ours-'));
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
    usageBased: true,
    paymentAddress: payee,
    network: world.chain.network,
  });
  if (only.status !== 201) throw new Error(`register: ${only.status} ${await only.text()}`);
  meteredOnly = (await only.json()) as Skill;
});

afterAll(async () => {
  await server?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('our client paying our skill server by upto', () => {
  it("pays the handler's charge: exactly that moves, and the receipt says so", async () => {
    const payer = await world.payer(100_000n);
    await approvePermit2(world.chain, payer);
    const payeeBefore = await world.chain.balanceOf(payee);
    const market = world.market({ wallet: payer, payment: 'upto', budget: '$0.05' });
    const { result, receipt } = await market.callWithReceipt(listed.slug, { units: 42 });
    expect(result).toEqual({ units: 42 });
    expect(receipt).toMatchObject({ scheme: 'upto', amount: '4200', payTo: payee, payer: payer.address });
    // The budget held the maximum while the call ran, and keeps what it was charged.
    expect(market.spending).toMatchObject({ spent: 4_200n, reserved: 0n, remaining: 45_800n });
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

  it('market call --payment upto says the most it authorizes before paying and the charge after', async () => {
    const payer = await world.payer(100_000n);
    await approvePermit2(world.chain, payer);
    const env = {
      XDG_CONFIG_HOME: join(folder, `cli-${payer.address}`),
      MARKET_API_URL: world.registryUrl,
      MARKET_PRIVATE_KEY: payer.privateKey,
    };
    const args = ['call', meteredOnly.slug, '{"units":7}', '--payment', 'upto', '--network', world.chain.network];
    const child = spawnMarket([...args, '--asset', world.chain.token.address], env, folder);
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    expect({ code, stderr }).toMatchObject({ code: 0 });
    expect(JSON.parse(stdout)).toEqual({ units: 7 });
    const lines = stderr.trim().split('\n');
    expect(lines[0]).toBe('Authorizing at most $0.01 (a usage-based price: the call is charged what it used, at most that).');
    expect(lines[1]).toBe('Charged $0.0007 of at most $0.01.');
    expect(JSON.parse(lines[2]!).receipt).toMatchObject({ scheme: 'upto', amount: '700', price: '$0.01', usageBased: true });
    expect(await world.chain.balanceOf(payer.address)).toBe(99_300n);
  });

  it('the MCP server says the charge of at most the price, and its budget keeps the charge', async () => {
    const agent = await world.payer(100_000n);
    await approvePermit2(world.chain, agent);
    const dataDir = join(folder, `mcp-${agent.address}`);
    const client = await mcpClient(world, dataDir, 50_000n, { wallet: agent, payment: 'upto' });
    try {
      const paid = await tool(client, 'call_skill', { slug: meteredOnly.slug, input: { units: 12 } });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.receipt).toMatchObject({ scheme: 'upto', amount: '1200', price: '$0.01' });
      expect(textOf(paid)).toContain('Charged $0.0012 of at most $0.01 (a usage-based price)');
      const budget = await new PersistentBudget(dataDir, 50_000n, 'day').snapshot();
      expect({ spent: budget.spent, reserved: budget.reserved }).toEqual({ spent: 1_200n, reserved: 0n });
    } finally {
      await client.close();
    }
  });
});
