/**
 * `market search` and `market call` read another catalogue (`--discovery`, a small Bazaar
 * discovery API served here) beside the registry: a skill of the reference server (`@x402/hono`,
 * settling through our facilitator), listed in no registry, is found there and paid by its URL at
 * the price the catalogue lists, and a price above `--max-price` is refused before anything is signed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';
import type { Address } from 'viem';
import { spawnMarket } from '../support/process';
import { exactTerms } from './support/reference-server';
import { NETWORK, useWorld } from './support/world';

const world = useWorld({ chain: true });
const work = mkdtempSync(join(tmpdir(), 'market-catalogues-cli-'));
const PRICE = 20_000n; // $0.02
let server: ReturnType<typeof Bun.serve>;
let catalogue: ReturnType<typeof Bun.serve>;
let payee: Address;
let url: string;
let catalogueUrl: string;

beforeAll(async () => {
  payee = await world.payee();
  const terms = exactTerms(world.chain, payee, PRICE);
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: world.facilitatorUrl })).register(
    world.chain.network,
    new ExactEvmScheme(),
  );
  const app = new Hono();
  app.use(paymentMiddleware({ 'POST /harbour-tides': { accepts: terms, description: 'Harbour tides' } }, resourceServer));
  app.post('/harbour-tides', async (c) => c.json({ tides: (await c.req.json<{ harbour: string }>()).harbour }));
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  url = `http://127.0.0.1:${server.port}/harbour-tides`;
  const resource = {
    resource: url,
    type: 'http',
    x402Version: 2,
    accepts: [
      {
        scheme: 'exact',
        network: terms.network,
        payTo: payee,
        amount: PRICE.toString(),
        asset: terms.price.asset,
        extra: terms.price.extra,
        maxTimeoutSeconds: 300,
      },
    ],
    description: 'Harbour tides',
    lastUpdated: new Date().toISOString(),
  };
  catalogue = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/discovery/search')
        return Response.json({ x402Version: 2, resources: [resource], partialResults: false, pagination: null });
      if (path === '/discovery/resources')
        return Response.json({ x402Version: 2, items: [resource], pagination: { limit: 100, offset: 0, total: 1 } });
      return new Response('not found', { status: 404 });
    },
  });
  catalogueUrl = `http://127.0.0.1:${catalogue.port}`;
});

afterAll(async () => {
  await server?.stop(true);
  await catalogue?.stop(true);
  rmSync(work, { recursive: true, force: true });
});

async function market(args: string[], env: Record<string, string> = {}) {
  const child = spawnMarket(args, { XDG_CONFIG_HOME: join(work, 'config'), MARKET_API_URL: world.registryUrl, ...env }, work);
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

describe('another catalogue on the command line', () => {
  it('market search lists its find after the registry’s, saying where it came from', async () => {
    const run = await market(['search', 'harbour', '--network', NETWORK, '--discovery', catalogueUrl]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${url}\t$0.02\t/harbour-tides\tfrom ${catalogueUrl}\n`);
    const json = await market(['search', 'harbour', '--json', '--network', NETWORK], { MARKET_DISCOVERY: catalogueUrl });
    expect(JSON.parse(json.stdout)).toMatchObject({ skills: [], discovered: [{ slug: url, priceAtomic: '20000', source: catalogueUrl }] });
    // The price filters hold for its finds too.
    const cheaper = await market(['search', 'harbour', '--json', '--network', NETWORK, '--max-price', '0.01'], {
      MARKET_DISCOVERY: catalogueUrl,
    });
    expect(JSON.parse(cheaper.stdout)).toMatchObject({ discovered: [] });
  });

  it('market call pays it by URL at the listed price, and refuses it above --max-price', async () => {
    const payer = await world.payer();
    const flags = ['--network', NETWORK, '--asset', world.asset.address, '--discovery', catalogueUrl];
    const before = await world.chain.balanceOf(payee);
    const refused = await market(['call', url, '{"harbour":"Brest"}', '--max-price', '$0.01', ...flags], {
      MARKET_PRIVATE_KEY: payer.privateKey,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('$0.01');
    expect(await world.chain.balanceOf(payee)).toBe(before);
    const paid = await market(['call', url, '{"harbour":"Brest"}', ...flags], { MARKET_PRIVATE_KEY: payer.privateKey });
    expect(paid.code).toBe(0);
    expect(JSON.parse(paid.stdout)).toEqual({ tides: 'Brest' });
    expect(await world.chain.balanceOf(payee)).toBe(before + PRICE);
  });
});
