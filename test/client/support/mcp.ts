/** `market mcp`'s tools in this process, paying from one of the world's payers within a daily budget. */
import type { SkillMarketOptions } from 'skill-market/client';
import { PersistentBudget } from '../../../src/mcp/ledger';
import { createMcpServer } from '../../../src/mcp/server';
import { inProcessClient } from '../../mcp/support';
import type { World } from './world';

/**
 * An MCP client of the tools, the budget ledger kept in `dataDir` (`budget` atomic units a day,
 * $0.10 the most a call may cost) and the client built by `world.market(market)`.
 */
export function mcpClient(world: World, dataDir: string, budget: bigint, market: Partial<SkillMarketOptions>) {
  const limits = { maxPrice: 100_000n, budget, period: 'day' as const, confirmAbove: undefined, allow: undefined };
  return inProcessClient(
    createMcpServer({
      market: world.market(market),
      budget: new PersistentBudget(dataDir, limits.budget, limits.period),
      config: { apiUrl: world.registryUrl, network: world.chain.network, assets: [world.chain.token.address], rpcUrl: undefined, limits },
      noWallet: undefined,
    }),
  );
}
