/**
 * Every limit is checked before anything is signed (signatures counted on a wrapped account), and
 * concurrent calls never take the budget past its limit: the server runs in process behind the
 * official MCP client (in-memory transport), paying a real skill server on anvil.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { LocalAccount } from 'viem';
import type { Limits } from '../../src/mcp/config';
import { PersistentBudget } from '../../src/mcp/ledger';
import { createMcpServer } from '../../src/mcp/server';
import { startAnswerDroppingProxy } from '../client/support/answer-dropping-proxy';
import { startReferenceSkill } from '../client/support/reference-server';
import { countingAccount, NETWORK, useWorld } from '../client/support/world';
import { tempDir, textOf, tool } from './support';

const world = useWorld({ chain: true });
let home: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  home = await tempDir();
});
afterAll(async () => home?.remove());

const LIMITS: Limits = { maxPrice: 100_000n, budget: 1_000_000n, period: 'day', confirmAbove: undefined, allow: undefined };

/** The official client connected to an in-process server paying from a counting account. */
async function connect(limits: Partial<Limits> = {}) {
  const wallet = countingAccount((await world.payer(1_000_000n)) as LocalAccount);
  const dataDir = `${home.path}/${crypto.randomUUID()}`;
  const full = { ...LIMITS, ...limits };
  const server = createMcpServer({
    market: world.market({ wallet }),
    budget: new PersistentBudget(dataDir, full.budget, full.period),
    config: { apiUrl: world.registryUrl, network: NETWORK, assets: [world.asset.address], rpcUrl: world.chain.rpcUrl, limits: full },
    noWallet: undefined,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'limits-test', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, wallet, dataDir, close: () => client.close() };
}

describe('limits are checked before anything is signed', () => {
  const cases: [string, Partial<Limits>, () => Promise<{ slug: string; name: string }>, string, string][] = [
    ['a price above the per-call maximum', { maxPrice: 9_999n }, () => world.addSkill(), 'max_price_exceeded', 'MARKET_MCP_MAX_PRICE'],
    [
      'a price above the confirmation threshold',
      { confirmAbove: 5_000n },
      () => world.addSkill(),
      'confirmation_required',
      'MARKET_MCP_CONFIRM_ABOVE',
    ],
    ['a skill off the allow-list', { allow: new Set(['some-other-skill']) }, () => world.addSkill(), 'not_allowed', 'MARKET_MCP_ALLOW'],
    ['a price beyond the budget left', { budget: 9_999n }, () => world.addSkill(), 'budget_exceeded', 'MARKET_MCP_BUDGET'],
  ];
  for (const [what, limits, addSkill, code, variable] of cases) {
    it(`refuses ${what} with ${code}, signs nothing and names ${variable}`, async () => {
      const skill = await addSkill();
      const { client, wallet, close } = await connect(limits);
      try {
        const refused = await tool(client, 'call_skill', { slug: skill.slug });
        expect(refused.isError).toBe(true);
        expect(refused.structuredContent.error.code).toBe(code);
        expect(textOf(refused)).toContain('Nothing was paid');
        expect(textOf(refused)).toContain(variable);
        expect(wallet.signatures).toBe(0);
        expect(world.server.requests.filter((r) => r.skill === skill.name)).toHaveLength(0);
      } finally {
        await close();
      }
    });
  }

  it('allows a skill by its creator address on the allow-list', async () => {
    const skill = await world.addSkill();
    const { client, wallet, close } = await connect({ allow: new Set([world.creator.address.toLowerCase()]) });
    try {
      expect((await tool(client, 'call_skill', { slug: skill.slug })).isError).toBeFalsy();
      expect(wallet.signatures).toBe(1);
    } finally {
      await close();
    }
  });

  it('refuses an inactive or unknown skill without signing', async () => {
    const { client, wallet, close } = await connect();
    try {
      const refused = await tool(client, 'call_skill', { slug: 'there-is-no-such-skill' });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent.error.code).toBe('skill_not_found');
      expect(wallet.signatures).toBe(0);
    } finally {
      await close();
    }
  });
});

describe('what a failed call costs', () => {
  it('a skill that fails before settling costs nothing: the hold is released and no call is listed', async () => {
    const skill = await world.addSkill({
      handler: () => {
        throw new Error('the forecast service is down');
      },
    });
    const { client, close } = await connect();
    try {
      const failed = await tool(client, 'call_skill', { slug: skill.slug });
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toContain('the forecast service is down');
      expect(textOf(failed)).toContain('Nothing was paid.');
      expect((await tool(client, 'wallet_status')).structuredContent.budget).toMatchObject({ spent: '0', reserved: '0' });
      expect((await tool(client, 'recent_calls')).structuredContent.calls).toEqual([]);
    } finally {
      await close();
    }
  });

  it('an answer lost after the reference x402 server settled counts against the budget, though it refuses the re-sent proof', async () => {
    const reference = await startReferenceSkill(world.chain, 10_000n, { name: 'reference-forecast' });
    const proxy = await startAnswerDroppingProxy(new URL(reference.endpoint).origin);
    const { client, close } = await connect();
    try {
      await world.creator.prove(reference.payeeAccount);
      const res = await world.creator.register({
        name: 'reference-forecast',
        endpoint: `${proxy.url}/reference-forecast`,
        price: '$0.01',
        paymentAddress: reference.payee,
        network: NETWORK,
      });
      const { slug } = (await res.json()) as { slug: string };
      proxy.drop(1);
      const lost = await tool(client, 'call_skill', { slug, input: { city: 'Lyon' } });
      expect(lost.isError).toBe(true);
      expect(lost.structuredContent.error).toMatchObject({ code: 'payment_rejected', charged: 'unknown' });
      expect(proxy.requests.map((r) => r.status)).toEqual([402, 'dropped', 402]);
      expect(await world.chain.balanceOf(reference.payee)).toBe(10_000n);
      expect((await tool(client, 'wallet_status')).structuredContent.budget).toMatchObject({ spent: '10000', reserved: '0' });
      expect((await tool(client, 'recent_calls')).structuredContent.calls).toEqual([
        expect.objectContaining({ slug, amount: '10000', charged: 'unknown' }),
      ]);
    } finally {
      await close();
      await proxy.close();
      await reference.stop();
    }
  });

  it('an answer lost after the payment settled counts against the budget and is listed as possibly charged', async () => {
    const skill = await world.addSkill({ dropAfterSettle: 10 });
    const { client, close } = await connect();
    try {
      const before = await world.chain.balanceOf(skill.payTo);
      const lost = await tool(client, 'call_skill', { slug: skill.slug });
      expect(lost.isError).toBe(true);
      expect(lost.structuredContent.error).toMatchObject({ code: 'network_error', charged: 'unknown' });
      expect(textOf(lost)).toContain('may have gone through; it counts against the budget');
      expect(await world.chain.balanceOf(skill.payTo)).toBe(before + 10_000n);
      expect((await tool(client, 'wallet_status')).structuredContent.budget).toMatchObject({ spent: '10000', reserved: '0' });
      expect((await tool(client, 'recent_calls')).structuredContent.calls).toEqual([
        expect.objectContaining({ slug: skill.slug, amount: '10000', charged: 'unknown' }),
      ]);
    } finally {
      await close();
    }
  });
});

describe('concurrent calls', () => {
  it('never overshoot the budget: with room for three of eight, exactly three are signed and paid', async () => {
    const skill = await world.addSkill();
    const { client, wallet, close } = await connect({ budget: 35_000n });
    try {
      const results = await Promise.all(Array.from({ length: 8 }, () => tool(client, 'call_skill', { slug: skill.slug })));
      const paid = results.filter((r) => !r.isError);
      expect(paid).toHaveLength(3);
      expect(results.filter((r) => r.isError).map((r) => r.structuredContent.error.code)).toEqual(Array(5).fill('budget_exceeded'));
      expect(wallet.signatures).toBe(3);
      expect((await tool(client, 'wallet_status')).structuredContent.budget).toMatchObject({
        spent: '30000',
        reserved: '0',
        remaining: '5000',
      });
    } finally {
      await close();
    }
  });

  it('share one budget file between two ledgers (as two processes would, through the lock file) without overshooting', async () => {
    const dataDir = `${home.path}/shared-${crypto.randomUUID()}`;
    const a = new PersistentBudget(dataDir, 5n, 'day');
    const b = new PersistentBudget(dataDir, 5n, 'day');
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).reserve(1n, 'x')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.name)).toEqual(
      Array(15).fill('BudgetRefusal'),
    );
    expect(await b.snapshot()).toMatchObject({ reserved: 5n, spent: 0n, remaining: 0n });
  });
});
