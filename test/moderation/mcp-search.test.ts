/**
 * MCP search goes through the registry's HTTP API: a skill the operators hide is gone from the
 * `search_skills` tool of `market mcp` (run in process behind the official MCP client) and back
 * once they list it again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { SkillMarket } from 'skill-market';
import type { Limits } from '../../src/mcp/config';
import { PersistentBudget } from '../../src/mcp/ledger';
import { createMcpServer } from '../../src/mcp/server';
import { bearer, jsonPost, newWallet, walletSignIn } from '../support/auth';
import { json, newCreator } from '../support/catalogue';
import { registryFixture } from '../support/registry';
import { inProcessClient, tempDir, tool } from '../mcp/support';

const LIMITS: Limits = { maxPrice: 100_000n, budget: 1_000_000n, period: 'day', confirmAbove: undefined, allow: undefined };

describe('MCP search and moderation', () => {
  const operatorWallet = newWallet();
  const fx = registryFixture('embedded', { moderation: { operators: [operatorWallet.address], reportsPerHour: 10 } });
  let registry: ReturnType<typeof Bun.serve>;
  let home: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    home = await tempDir();
    registry = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => fx.registry.app.handle(r) });
  });
  afterAll(async () => {
    await registry?.stop(true);
    await home?.remove();
  });

  it('finds a skill until the operators hide it, and again once they list it again', async () => {
    const apiUrl = `http://127.0.0.1:${registry.port}`;
    const creator = await newCreator(fx.request);
    const skill = await json(await creator.register({ name: 'lighthouse-keeper', description: 'Answers lighthouse questions' }));
    const operator = (await walletSignIn(fx.request, operatorWallet)).token;
    const mcp = createMcpServer({
      market: new SkillMarket({ apiUrl, wallet: newWallet() }),
      budget: new PersistentBudget(`${home.path}/budget`, LIMITS.budget, LIMITS.period),
      config: { apiUrl, network: 'eip155:8453', assets: [], rpcUrl: 'http://127.0.0.1:9', limits: LIMITS },
      noWallet: undefined,
    });
    const client = await inProcessClient(mcp);
    const found = async () =>
      ((await tool(client, 'search_skills', { query: 'lighthouse' })).structuredContent.skills as { slug: string }[]).map((s) => s.slug);
    try {
      expect(await found()).toContain(skill.slug);
      const hide = await fx.request(
        `/operator/skills/${skill.slug}/hide`,
        jsonPost({ reason: 'Impersonates a harbour office' }, bearer(operator)),
      );
      expect(hide.status).toBe(200);
      expect(await found()).not.toContain(skill.slug);
      const restore = await fx.request(`/operator/skills/${skill.slug}/restore`, jsonPost({ reason: 'Renamed' }, bearer(operator)));
      expect(restore.status).toBe(200);
      expect(await found()).toContain(skill.slug);
    } finally {
      await client.close();
    }
  });
});
