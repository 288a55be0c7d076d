/**
 * `market mcp` over stdio and Streamable HTTP, driven by the official MCP client against a real registry, our
 * facilitator, anvil with our EIP-3009 token and paid skill servers (the test server and `market serve`): tools and their schemas,
 * discovery, a paid call whose tokens move on chain, and the owner's limits (per-call maximum,
 * a budget that survives a restart, the allow-list, bad input), each refusal before any proof;
 * and stdout carrying nothing but protocol messages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { formatPriceUsd } from 'skill-market/x402';
import { join } from 'node:path';
import { eventually } from '../support/eventually';
import { CLI_ENTRY, freePort, spawnMarket } from '../support/process';
import { useWorld } from '../client/support/world';
import { keystoreFor, PASSPHRASE, stdioClient, tempDir, textOf, tool, worldEnv } from './support';

const world = useWorld({ chain: true });
const ROOT = join(import.meta.dir, '../..');
let home: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  home = await tempDir();
});
afterAll(async () => home?.remove());

const inputSchema = {
  type: 'object',
  required: ['city'],
  properties: { city: { type: 'string', minLength: 2 } },
  additionalProperties: false,
};
const proofsTo = (name: string) => world.server.requests.filter((r) => r.skill === name && r.proof !== null);

/** A funded payer's keystore and the env of a server paying from it, with its own budget file. */
async function payingEnv(extra: Record<string, string> = {}) {
  const payer = await world.payer(1_000_000n);
  const dir = `${home.path}/${crypto.randomUUID().slice(0, 8)}`;
  const keystore = await keystoreFor(payer.privateKey, home.path);
  return { payer, env: worldEnv(world, dir, { MARKET_KEYSTORE: keystore, MARKET_KEYSTORE_PASSPHRASE: PASSPHRASE, ...extra }) };
}

describe('market mcp over stdio', () => {
  type McpClient = Awaited<ReturnType<typeof stdioClient>>;
  /** Discovery-only: no wallet. */
  let discovery: McpClient;
  /** Pays from a keystore, at most $0.015 a call, only the skills `weather` and `pricey`. */
  let limited: McpClient;
  let payer: Awaited<ReturnType<typeof payingEnv>>['payer'];
  let weather: Awaited<ReturnType<typeof world.addSkill>>;
  let pricey: typeof weather;
  let offList: typeof weather;

  beforeAll(async () => {
    weather = await world.addSkill({
      name: `weather-${crypto.randomUUID().slice(0, 6)}`,
      inputSchema,
      handler: (input) => ({ forecast: `sun in ${(input as { city: string }).city}` }),
    });
    pricey = await world.addSkill({ price: 20_000n });
    offList = await world.addSkill();
    const paying = await payingEnv({ MARKET_MCP_MAX_PRICE: '$0.015', MARKET_MCP_ALLOW: `${weather.slug},${pricey.slug}` });
    payer = paying.payer;
    [discovery, limited] = await Promise.all([stdioClient(worldEnv(world, `${home.path}/nowallet`)), stdioClient(paying.env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([discovery?.close(), limited?.close()]);
  });

  it('lists its tools with JSON Schemas a model can follow', async () => {
    const { tools } = await discovery.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual([
      'call_skill',
      'get_money_back',
      'get_skill',
      'list_groups',
      'payment_channels',
      'recent_calls',
      'search_skills',
      'skill_reviews',
      'wallet_status',
    ]);
    for (const t of tools) expect(t.description!.length).toBeGreaterThan(40);
    expect(byName.call_skill!.inputSchema).toMatchObject({
      type: 'object',
      required: ['slug'],
      properties: { slug: { type: 'string' }, input: { type: 'object' } },
    });
    expect(byName.search_skills!.inputSchema.properties).toMatchObject({
      query: { type: 'string' },
      maxPrice: { type: 'string' },
      sort: { enum: ['relevance', 'popular', 'newest', 'price', 'rating'] },
      limit: { type: 'integer', maximum: 50 },
    });
    expect(byName.get_skill!.annotations?.readOnlyHint).toBe(true);
    // Every tool declares what its structuredContent holds; this client checks each answer against it.
    for (const t of tools) expect(t.outputSchema).toMatchObject({ type: 'object', properties: { error: { type: 'object' } } });
    expect(byName.call_skill!.outputSchema?.properties).toMatchObject({ receipt: {}, result: {} });
    expect(byName.search_skills!.outputSchema?.properties).toMatchObject({ skills: { type: 'array' } });
  });

  it('says a usage-based skill costs "up to" its price, charged by use, in search and details', async () => {
    const metered = await world.addSkill({ name: `metered-${crypto.randomUUID().slice(0, 6)}`, usageBased: true });
    const found = await tool(discovery, 'search_skills', { query: 'metered' });
    expect(textOf(found)).toContain(`${metered.slug}: ${metered.name}, up to $0.01/call`);
    expect(found.structuredContent.skills.find((s: { slug: string }) => s.slug === metered.slug)).toMatchObject({
      price: '$0.01',
      usageBased: true,
    });
    const details = await tool(discovery, 'get_skill', { slug: metered.slug });
    expect(textOf(details)).toContain(`${metered.slug}: ${metered.name} — up to $0.01 per call, charged by use on `);
    expect(details.structuredContent).toMatchObject({ usageBased: true });
    expect((await tool(discovery, 'get_skill', { slug: weather.slug })).structuredContent).toMatchObject({ usageBased: false });
  });

  it('answers arguments outside a tool schema with a tool error, and keeps serving', async () => {
    const wrong = await tool(discovery, 'search_skills', { limit: 500 });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toContain('limit');
    expect((await tool(discovery, 'search_skills', { limit: 1 })).isError).toBeFalsy();
  });

  it('finds a skill, shows its input schema, and pays it: tokens move on chain and the receipt says where', async () => {
    // By the word: the random suffix of the name is not reliably one search token.
    const found = await tool(limited, 'search_skills', { query: 'weather' });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent.skills.map((s: { slug: string }) => s.slug)).toContain(weather.slug);
    expect(textOf(found)).toContain(`${weather.slug}: ${weather.name}, $0.01/call`);

    const details = await tool(limited, 'get_skill', { slug: weather.slug });
    expect(details.structuredContent).toMatchObject({
      slug: weather.slug,
      price: '$0.01',
      priceAtomic: '10000',
      isActive: true,
      inputSchema,
      rating: null,
      reviewCount: 0,
      status: 'unknown',
    });
    expect(textOf(details)).toContain('"required":["city"]');

    const before = { payer: await world.chain.balanceOf(payer.address), payee: await world.chain.balanceOf(weather.payTo) };
    const paid = await tool(limited, 'call_skill', { slug: weather.slug, input: { city: 'Paris' } });
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent.result).toEqual({ forecast: 'sun in Paris' });
    expect(paid.structuredContent.receipt).toMatchObject({
      amount: '10000',
      network: 'eip155:84532',
      payTo: weather.payTo,
      payer: payer.address,
    });
    expect(paid.structuredContent.receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(textOf(paid)).toContain(`transaction ${paid.structuredContent.receipt.transaction}`);
    expect(await world.chain.balanceOf(payer.address)).toBe(before.payer - 10_000n);
    expect(await world.chain.balanceOf(weather.payTo)).toBe(before.payee + 10_000n);

    const recent = await tool(limited, 'recent_calls');
    expect(recent.structuredContent.calls).toEqual([
      expect.objectContaining({
        slug: weather.slug,
        amount: '10000',
        charged: 'yes',
        transaction: paid.structuredContent.receipt.transaction,
      }),
    ]);
    const status = await tool(limited, 'wallet_status');
    expect(status.structuredContent).toMatchObject({
      address: payer.address,
      mode: 'paying',
      balance: { amount: String(before.payer - 10_000n), asset: world.asset.address },
      budget: { period: 'day', limit: '1000000', spent: '10000', remaining: '990000' },
      limits: { maxPricePerCall: '15000', allowList: [weather.slug, pricey.slug] },
    });
  });

  it('refuses input that fails the schema before any request to the skill', async () => {
    const served = world.server.requests.filter((r) => r.skill === weather.name).length;
    const refused = await tool(limited, 'call_skill', { slug: weather.slug, input: { city: 'P', extra: true } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.code).toBe('invalid_input');
    expect(textOf(refused)).toContain(`Input refused by the inputSchema of ${weather.slug}`);
    expect(world.server.requests.filter((r) => r.skill === weather.name)).toHaveLength(served);
    expect((await tool(limited, 'wallet_status')).structuredContent.budget.spent).toBe('10000');
  });

  it('refuses a skill above the per-call maximum with nothing signed, telling how to raise it', async () => {
    const before = await world.chain.balanceOf(payer.address);
    const refused = await tool(limited, 'call_skill', { slug: pricey.slug });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.code).toBe('max_price_exceeded');
    expect(textOf(refused)).toContain(
      'above the per-call maximum of $0.015. Nothing was paid. The user can raise it with MARKET_MCP_MAX_PRICE',
    );
    expect(world.server.requests.filter((r) => r.skill === pricey.name)).toHaveLength(0);
    expect(await world.chain.balanceOf(payer.address)).toBe(before);
  });

  it('pays only skills on the allow-list', async () => {
    const refused = await tool(limited, 'call_skill', { slug: offList.slug });
    expect(refused.structuredContent.error.code).toBe('not_allowed');
    expect(textOf(refused)).toContain(`add "${offList.slug}" or its creator`);
    expect(world.server.requests.filter((r) => r.skill === offList.name)).toHaveLength(0);
  });

  it('keeps the budget spent across a restart: the call that would pass it is refused before and after', async () => {
    const skill = await world.addSkill();
    const { payer, env } = await payingEnv({ MARKET_MCP_BUDGET: formatPriceUsd(25_000n) });
    const first = await stdioClient(env);
    try {
      for (let i = 0; i < 2; i++) expect((await tool(first, 'call_skill', { slug: skill.slug })).isError).toBeFalsy();
      const refused = await tool(first, 'call_skill', { slug: skill.slug });
      expect(refused.structuredContent.error.code).toBe('budget_exceeded');
      expect(textOf(refused)).toContain('only $0.005 is left of the $0.025 daily budget');
    } finally {
      await first.close();
    }
    const balance = await world.chain.balanceOf(payer.address);
    const second = await stdioClient(env);
    try {
      expect((await tool(second, 'wallet_status')).structuredContent.budget).toMatchObject({ spent: '20000', remaining: '5000' });
      const refused = await tool(second, 'call_skill', { slug: skill.slug });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent.error.code).toBe('budget_exceeded');
      expect((await tool(second, 'recent_calls')).structuredContent.calls).toHaveLength(2);
    } finally {
      await second.close();
    }
    expect(proofsTo(skill.name)).toHaveLength(2);
    expect(await world.chain.balanceOf(payer.address)).toBe(balance);
  });

  it('runs discovery-only without a wallet: reading works, calls explain how to add one', async () => {
    expect((await tool(discovery, 'get_skill', { slug: offList.slug })).structuredContent.slug).toBe(offList.slug);
    const refused = await tool(discovery, 'call_skill', { slug: offList.slug });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.code).toBe('wallet_required');
    expect(textOf(refused)).toContain('discovery-only mode');
    expect(textOf(refused)).toContain('MARKET_KEYSTORE');
    expect((await tool(discovery, 'wallet_status')).structuredContent).toMatchObject({ address: null, mode: 'discovery-only' });
    expect(discovery.stderr()).toContain('discovery only (no wallet)');
    expect(world.server.requests.filter((r) => r.skill === offList.name)).toHaveLength(0);
  });

  it("reads the registry's reviews (none yet for a new skill), and lists groups", async () => {
    const reviews = await tool(discovery, 'skill_reviews', { slug: weather.slug });
    expect(reviews.isError).toBeFalsy();
    expect(reviews.structuredContent).toMatchObject({ available: true, reviews: [] });
    expect(reviews.content[0]).toEqual({ type: 'text', text: `No reviews of ${weather.slug} yet.` });
    expect(JSON.parse((reviews.content[1] as { text: string }).text)).toEqual(reviews.structuredContent); // the JSON as text too
    const missing = await tool(discovery, 'skill_reviews', { slug: 'no-such-skill-here' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('No skill no-such-skill-here');
    const groups = await tool(discovery, 'list_groups');
    expect(groups.structuredContent.groups.map((g: { name: string }) => g.name)).toContain(world.group);
  });
});

describe('market mcp paying a skill served by market serve', () => {
  it('finds the example word-count skill, refuses bad input unpaid, and pays a call (its first deposits into a payment channel)', async () => {
    const payee = await world.chain.createAccount();
    await world.creator.prove(payee);
    const port = await freePort();
    // The groups the example's skills name.
    await world.creator.group('tools');
    await world.creator.group('text');
    // Its own channel folder: the default (.market/channels in the working directory, the
    // repository here) would carry channel records of an earlier run into this one.
    const channels = await tempDir();
    const serve = spawnMarket(
      [
        'serve',
        'examples/creator/skills.ts',
        '--channels-dir',
        channels.path,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--endpoint',
        `http://127.0.0.1:${port}`,
        '--groups',
        world.group,
        '--api-url',
        world.registryUrl,
        '--facilitator',
        world.facilitatorUrl,
        '--network',
        world.chain.network,
        '--asset',
        world.asset.address,
      ],
      { MARKET_WALLET_ADDRESS: payee.address, MARKET_API_KEY: world.creator.key, LOG_LEVEL: 'info' },
      ROOT,
    );
    let output = '';
    const drain = async (stream: ReadableStream<Uint8Array>) => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
    };
    const drained = Promise.all([drain(serve.stdout), drain(serve.stderr)]);
    const { payer, env } = await payingEnv();
    const client = await stdioClient(env);
    try {
      // The log is JSON lines: `registered \"word-count\" as <slug>`.
      const slug = await eventually(
        () => /registered \\"word-count\\" as ([\w-]+)/.exec(output)?.[1],
        (found) => found !== undefined,
        'market serve registers word-count',
        20_000,
        { context: () => output },
      );
      const details = await tool(client, 'get_skill', { slug: slug! });
      expect(details.structuredContent).toMatchObject({
        price: '$0.002',
        endpoint: `http://127.0.0.1:${port}/word-count`,
        inputSchema: { required: ['text'] },
      });

      const bad = await tool(client, 'call_skill', { slug: slug!, input: { text: 42 } });
      expect(bad.structuredContent.error.code).toBe('invalid_input');
      const before = await world.chain.balanceOf(payer.address);
      const paid = await tool(client, 'call_skill', { slug: slug!, input: { text: 'one two three' } });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.result).toEqual({ words: 3, characters: 13 });
      // A $0.002 skill of market serve is sold over a payment channel too: the call deposited ten calls' worth.
      expect(paid.structuredContent.receipt).toMatchObject({
        amount: '2000',
        payer: payer.address,
        payTo: payee.address,
        scheme: 'batch-settlement',
        channelId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
      expect(paid.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('over payment channel') });
      expect(await world.chain.balanceOf(payer.address)).toBe(before - 20_000n);
    } finally {
      await client.close();
      serve.kill('SIGTERM');
      await serve.exited;
      await drained;
      await channels.remove();
    }
  });
});

describe('market mcp over Streamable HTTP', () => {
  /** Starts `market mcp --http` on a free loopback port; resolves once it answers. */
  async function startHttp(env: Record<string, string>) {
    const port = await freePort();
    const child = spawnMarket(['mcp', '--http', '--port', String(port)], env);
    const url = `http://127.0.0.1:${port}/mcp`;
    const answers = () =>
      fetch(url).then(
        () => true,
        () => child.exitCode !== null, // exited: stop waiting, and say why below
      );
    await eventually(answers, Boolean, 'market mcp --http answers', 15_000);
    if (child.exitCode !== null) throw new Error(`market mcp exited: ${await new Response(child.stderr).text()}`);
    return {
      url,
      stop: async () => {
        child.kill();
        await child.exited;
      },
    };
  }

  it('serves the same tools and pays a skill, tokens moving on chain', async () => {
    const skill = await world.addSkill();
    const { payer, env } = await payingEnv();
    const server = await startHttp(env);
    const client = new Client({ name: 'market-tests', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('call_skill');
      const before = await world.chain.balanceOf(payer.address);
      const paid = await tool(client, 'call_skill', { slug: skill.slug });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await world.chain.balanceOf(payer.address)).toBe(before - 10_000n);
      // A web page reaching the port through DNS rebinding (another Host) or from another origin is refused.
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
      };
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      for (const extra of [{ host: 'rebound.example:80' }, { origin: 'https://evil.example' }] as Record<string, string>[]) {
        const res = await fetch(server.url, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(initialize) });
        expect(res.status).toBe(403);
      }
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('asks for the bearer token when one is set, and refuses to listen beyond loopback without one', async () => {
    const token = 'a-long-enough-test-token-0123456789';
    const server = await startHttp({ ...worldEnv(world, `${home.path}/http`), MARKET_MCP_TOKEN: token });
    try {
      const anonymous = new Client({ name: 'market-tests', version: '1.0.0' });
      await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(server.url)))).rejects.toThrow();
      const res = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED', requestId: expect.any(String) });
      const client = new Client({ name: 'market-tests', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      expect((await tool(client, 'list_groups')).isError).toBeFalsy();
      await client.close();
    } finally {
      await server.stop();
    }
    const exposed = spawnMarket(
      ['mcp', '--http', '--host', '0.0.0.0', '--port', String(await freePort())],
      worldEnv(world, `${home.path}/http`),
    );
    expect(await exposed.exited).toBe(1);
    expect(await new Response(exposed.stderr).text()).toContain('MARKET_MCP_TOKEN');
  });
});

describe('stdout', () => {
  it('carries protocol messages only; logs go to stderr', async () => {
    const child = Bun.spawn([process.execPath, CLI_ENTRY, 'mcp'], {
      env: worldEnv(world, `${home.path}/raw`),
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const messages = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search_skills', arguments: { query: 'anything' } } },
    ];
    child.stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(''));
    await child.stdin.flush();
    const lines: string[] = [];
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    while (lines.length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts.filter(Boolean));
    }
    child.stdin.end();
    expect(await child.exited).toBe(0);
    const parsed = lines.map((l) => JSON.parse(l) as { jsonrpc: string; id: number });
    expect(parsed.map((m) => [m.jsonrpc, m.id])).toEqual([
      ['2.0', 1],
      ['2.0', 2],
      ['2.0', 3],
    ]);
    let rest = buffered;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += chunk.value;
    expect(rest).toBe('');
    expect(await new Response(child.stderr).text()).toContain('market mcp: discovery only');
  });
});
