/**
 * Money back from a payment channel in one step, for a payer holding no ETH at all: `market
 * channels --refund` has the channel's server refund what it did not charge (its facilitator pays
 * the gas), and `SkillMarket.refundChannel` does the same in code. A server that cannot have
 * refunds signed is answered in plain words, and the command falls back to the timed withdrawal,
 * which says plainly that the wallet needs ETH for it; with ETH it starts, and `--finalize` before
 * the delay says when it can be finished.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import type { Address } from 'viem';
import { servedFacilitator, type ServedFacilitator } from '../facilitator/channels/support';
import type { TestAccount } from '../support/chain';
import { spawnMarket } from '../support/process';
import { loopbackServeOptions } from '../support/skill-server';
import { useWorld } from './support/world';
import { PersistentBudget } from '../../src/mcp/ledger';
import { createMcpServer } from '../../src/mcp/server';
import { inProcessClient, tool } from '../mcp/support';

const world = useWorld({ chain: true });
const PRICE = 1_000n; // $0.001
const DEPOSIT = 10n * PRICE; // --max-deposit $0.01
const KEY = 'money-back-receiver-key-0123456789';
let facilitator: ServedFacilitator;
let folder: string;
let cooperative: { slug: string; payee: Address };
let unbound: { slug: string; payee: Address };
const servers: SkillServer[] = [];

/** Our skill server selling `echo` over channels, listed; with `key`, its facilitator signs its refunds. */
async function listed(payee: Address, key?: string) {
  const name = `echo-${crypto.randomUUID().slice(0, 8)}`;
  const server = await serve(
    { [name]: skill({ price: '$0.001' }, (input: unknown) => ({ echo: input })) },
    loopbackServeOptions(world.chain, facilitator.url, payee, {
      asset: world.asset,
      ...(key ? { facilitatorApiKey: key } : {}),
      channels: { store: join(folder, name), withdrawDelay: 900, claimWithinMs: 600_000 },
    }),
  );
  servers.push(server);
  const res = await world.creator.register({
    name,
    endpoint: server.url,
    price: '$0.001',
    paymentAddress: payee,
    network: world.chain.network,
    groups: [world.group],
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return { slug: ((await res.json()) as { slug: string }).slug, payee };
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'money-back-'));
  const bound = await world.payee();
  facilitator = await servedFacilitator(world.chain, 'embedded', { config: { receiverKeys: [{ receiver: bound, key: KEY }] } });
  cooperative = await listed(bound, KEY);
  unbound = await listed(await world.payee());
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.stop();
  await facilitator?.close();
  await rm(folder, { recursive: true, force: true });
});

/** `market …` as a payer with its own config folder, paying `payer`. */
function cli(payer: TestAccount, name: string) {
  const env = {
    XDG_CONFIG_HOME: join(folder, name),
    MARKET_API_URL: world.registryUrl,
    MARKET_PRIVATE_KEY: payer.privateKey,
    MARKET_RPC_URL: world.chain.rpcUrl,
  };
  return async (args: string[]) => {
    const child = spawnMarket([...args, '--network', world.chain.network, '--asset', world.chain.token.address], env, folder);
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    return { code, stdout, stderr };
  };
}

describe('money back from a channel', () => {
  it('market channels --refund: the server refunds deposit − charged to a payer without ETH, in one step', async () => {
    const payer = await world.chain.createAccount({ eth: 0n, usdc: 1_000_000n });
    const market = cli(payer, 'refund');
    for (const i of [1, 2]) {
      const call = await market(['call', cooperative.slug, `{"i":${i}}`, '--payment', 'channel', '--max-deposit', '$0.01']);
      expect(call.code).toBe(0);
    }
    expect(await world.chain.balanceOf(payer.address)).toBe(1_000_000n - DEPOSIT);
    const [channel] = JSON.parse((await market(['channels', '--json'])).stdout) as { channelId: string }[];

    const refund = await market(['channels', '--refund', channel!.channelId, '--json']);
    expect({ code: refund.code, stderr: refund.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(refund.stdout)).toMatchObject({ status: 'refunded', amount: `${DEPOSIT - 2n * PRICE}` });
    expect(await world.chain.balanceOf(payer.address)).toBe(1_000_000n - 2n * PRICE);
    expect(await world.chain.publicClient.getBalance({ address: payer.address })).toBe(0n);
    // The channel's listing says nothing is left to the payer.
    const [after] = JSON.parse((await market(['channels', '--json'])).stdout) as { deposit: string; charged: string }[];
    expect(BigInt(after!.deposit) - BigInt(after!.charged)).toBe(0n);
  }, 60_000);

  it('SkillMarket.refundChannel refunds in code, and answers a server that cannot have refunds signed in plain words', async () => {
    const payer = await world.chain.createAccount({ eth: 0n, usdc: 1_000_000n });
    const market = world.market({ wallet: payer, payment: 'channel', maxDeposit: '$0.01' });
    await market.call(unbound.slug, { i: 1 });
    await market.call(cooperative.slug, { i: 1 });
    const [a, b] = await market.channels();
    const byPayee = (payee: Address) => [a!, b!].find((c) => c.receiver.toLowerCase() === payee.toLowerCase())!;
    const refused = await market.refundChannel(byPayee(unbound.payee).channelId);
    expect(refused).toMatchObject({ status: 'refused', reason: 'invalid_batch_settlement_evm_refund_receiver_consent_required' });
    expect(refused.status === 'refused' && refused.message).toContain('cannot have refunds signed');
    const refunded = await market.refundChannel(byPayee(cooperative.payee).channelId);
    expect(refunded).toMatchObject({ status: 'refunded', amount: `${DEPOSIT - PRICE}` });
    expect(await world.chain.balanceOf(payer.address)).toBe(1_000_000n - DEPOSIT - PRICE);
  }, 60_000);

  it('falls back to the timed withdrawal when the server does not refund: plain words without ETH, started with it', async () => {
    const payer = await world.chain.createAccount({ eth: 0n, usdc: 1_000_000n });
    const market = cli(payer, 'fallback');
    expect((await market(['call', unbound.slug, '{"i":1}', '--payment', 'channel', '--max-deposit', '$0.01'])).code).toBe(0);
    const [channel] = JSON.parse((await market(['channels', '--json'])).stdout) as { channelId: string }[];

    const broke = await market(['channels', '--refund', channel!.channelId]);
    expect(broke.code).toBe(1);
    expect(broke.stderr).toContain('cannot have refunds signed');
    expect(broke.stderr).toContain('holds no ETH');
    expect(broke.stderr.split('\n').length).toBeLessThan(5); // no client library's error dump

    await world.chain.testClient.setBalance({ address: payer.address, value: 10n ** 17n });
    const started = await market(['channels', '--refund', channel!.channelId, '--json']);
    expect(started.code).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({ channelId: channel!.channelId, withdrawing: `${DEPOSIT}` });
    const early = await market(['channels', '--finalize', channel!.channelId]);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('can be finished from');
    const again = await market(['channels', '--withdraw', channel!.channelId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already under way');
  }, 60_000);

  it('market mcp: payment_channels shows what is the payer’s and get_money_back returns it, for an agent without ETH', async () => {
    const dataDir = join(folder, 'mcp');
    const limits = { maxPrice: 10_000n, budget: 1_000_000n, period: 'day' as const, confirmAbove: undefined, allow: undefined };
    const agent = await world.chain.createAccount({ eth: 0n, usdc: 1_000_000n });
    const server = createMcpServer({
      market: world.market({ wallet: agent, maxDeposit: '$0.01', channels: join(dataDir, 'channels.json') }),
      budget: new PersistentBudget(dataDir, limits.budget, limits.period),
      config: {
        apiUrl: world.registryUrl,
        network: world.chain.network,
        assets: [world.chain.token.address],
        rpcUrl: world.chain.rpcUrl,
        limits,
      },
      noWallet: undefined,
      account: agent,
    });
    const client = await inProcessClient(server);
    try {
      for (const i of [1, 2, 3]) expect((await tool(client, 'call_skill', { slug: cooperative.slug, input: { i } })).isError).toBeFalsy();
      const listed = await tool(client, 'payment_channels', {});
      expect(listed.structuredContent.channels).toEqual([
        expect.objectContaining({ yours: `${DEPOSIT - 3n * PRICE}`, charged: `${3n * PRICE}` }),
      ]);
      const back = await tool(client, 'get_money_back', {});
      expect(back.isError).toBeFalsy();
      expect(back.structuredContent.results).toEqual([expect.objectContaining({ outcome: 'refunded', amount: `${DEPOSIT - 3n * PRICE}` })]);
      expect(await world.chain.balanceOf(agent.address)).toBe(1_000_000n - 3n * PRICE);
      const after = await tool(client, 'payment_channels', {});
      expect(after.structuredContent.channels).toEqual([expect.objectContaining({ yours: '0' })]);
      expect((await tool(client, 'get_money_back', {})).structuredContent.results).toEqual([]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
