/**
 * The MCP server searches other catalogues beside the registry and pays what it finds there by
 * URL, within its limits: skills served by the reference server (`@x402/hono`, the `bazaar`
 * extension declared), listed in no registry, only in our facilitator's Bazaar (catalogued from a
 * payment the reference client `@x402/fetch` made through it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { wrapFetchWithPayment } from '@x402/fetch';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import type { Address, LocalAccount } from 'viem';
import type { Limits } from '../../src/mcp/config';
import { PersistentBudget } from '../../src/mcp/ledger';
import { createMcpServer } from '../../src/mcp/server';
import { countingAccount, NETWORK, useWorld } from '../client/support/world';
import { tempDir, textOf, tool } from './support';

const world = useWorld({ chain: true });
const TIDES = 10_000n; // $0.01
const STORMS = 500_000n; // $0.50, above the per-call maximum
let home: { path: string; remove(): Promise<void> };
let server: ReturnType<typeof Bun.serve>;
let payee: Address;
let base: string;
let handled = 0;

beforeAll(async () => {
  home = await tempDir();
  payee = await world.payee();
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: world.facilitatorUrl }))
    .register(world.chain.network, new ExactEvmScheme())
    .registerExtension(bazaarResourceServerExtension);
  const route = (price: bigint, description: string) => ({
    accepts: {
      scheme: 'exact' as const,
      network: world.chain.network,
      payTo: payee,
      price: {
        amount: price.toString(),
        asset: world.chain.token.address,
        extra: { name: world.chain.token.name, version: world.chain.token.version },
      },
    },
    description,
    extensions: declareDiscoveryExtension({
      bodyType: 'json',
      input: { harbour: 'Brest' },
      inputSchema: { type: 'object', properties: { harbour: { type: 'string' } }, required: ['harbour'] },
      output: { example: { harbour: 'Brest', answer: 'high tide 06:12' } },
    }),
  });
  const app = new Hono();
  app.use(
    paymentMiddleware(
      { 'POST /tides': route(TIDES, 'Tide times for a harbour'), 'POST /storms': route(STORMS, 'Storm warnings for a harbour') },
      resourceServer,
    ),
  );
  for (const path of ['/tides', '/storms']) {
    app.post(path, async (c) => {
      handled++;
      const { harbour } = (await c.req.json()) as { harbour: string };
      return c.json({ harbour, answer: `${path.slice(1)} for ${harbour}` });
    });
  }
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  base = `http://127.0.0.1:${server.port}`;
  // Someone paid each once through our facilitator with the reference client: it catalogued them.
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: await world.payer(2_000_000n) });
  client.setSpendControls({ allowedAssets: [{ network: world.chain.network, asset: world.chain.token.address }] });
  const pay = wrapFetchWithPayment(fetch, client);
  for (const path of ['/tides', '/storms']) {
    const res = await pay(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"harbour":"Brest"}',
    });
    if (res.status !== 200) throw new Error(`priming ${path}: ${res.status}`);
  }
}, 60_000);

afterAll(async () => {
  await server?.stop(true);
  await home?.remove();
});

const LIMITS: Limits = { maxPrice: 100_000n, budget: 1_000_000n, period: 'day', confirmAbove: undefined, allow: undefined };

async function connect() {
  const wallet = countingAccount((await world.payer(1_000_000n)) as LocalAccount);
  const mcp = createMcpServer({
    market: world.market({ wallet, discovery: [world.facilitatorUrl] }),
    budget: new PersistentBudget(`${home.path}/${crypto.randomUUID()}`, LIMITS.budget, LIMITS.period),
    config: { apiUrl: world.registryUrl, network: NETWORK, assets: [world.asset.address], rpcUrl: world.chain.rpcUrl, limits: LIMITS },
    noWallet: undefined,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  const client = new Client({ name: 'catalogues-test', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, wallet };
}

describe('another catalogue beside the registry', () => {
  it('finds the skill only the facilitator lists, saying where it came from', async () => {
    const { client } = await connect();
    const found = await tool(client, 'search_skills', { query: 'tides' });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent.skills).toEqual([]);
    expect(found.structuredContent.discovered).toMatchObject([
      { slug: `${base}/tides`, price: '$0.01', priceAtomic: TIDES.toString(), network: NETWORK, source: world.facilitatorUrl },
    ]);
    expect(textOf(found)).toContain(`- ${base}/tides: `);
    expect(textOf(found)).toContain(`(from ${world.facilitatorUrl})`);
    await client.close();
  });

  it('pays it by URL at its listed price, and the answer comes back', async () => {
    const { client, wallet } = await connect();
    const before = await world.chain.balanceOf(payee);
    const runs = handled;
    const paid = await tool(client, 'call_skill', { slug: `${base}/tides`, input: { harbour: 'Roscoff' } });
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({
      slug: `${base}/tides`,
      result: { harbour: 'Roscoff', answer: 'tides for Roscoff' },
      receipt: { amount: TIDES.toString(), network: NETWORK, payTo: payee },
    });
    expect(wallet.signatures).toBe(1);
    expect(handled).toBe(runs + 1);
    expect(await world.chain.balanceOf(payee)).toBe(before + TIDES);
    await client.close();
  });

  it('refuses one above the per-call maximum before signing anything', async () => {
    const { client, wallet } = await connect();
    const runs = handled;
    const refused = await tool(client, 'call_skill', { slug: `${base}/storms`, input: { harbour: 'Brest' } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.code).toBe('max_price_exceeded');
    expect(textOf(refused)).toContain('Nothing was paid');
    expect(wallet.signatures).toBe(0);
    expect(handled).toBe(runs);
    await client.close();
  });
});
