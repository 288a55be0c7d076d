/**
 * The MCP server: tools for an agent to find skills, read one (its input schema included), pay
 * and call it within the owner's limits, and see the wallet, the budget and its recent calls.
 * Each tool answers a concise text and the same facts as `structuredContent`; a refusal or
 * failure is a tool error (`isError`) whose text says what happened to the money and what to do.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { SkillMarket } from 'skill-market/client';
import type { LocalAccount } from 'viem';
import { VERSION } from '../version';
import type { McpConfig } from './config';
import type { PersistentBudget } from './ledger';
import { Payments } from './payments';
import { registerDiscoveryTools } from './tools/discovery';
import { registerChannelTools } from './tools/channels';
import { registerPayingTools } from './tools/paying';

export interface ServerDeps {
  market: SkillMarket;
  budget: PersistentBudget;
  config: Pick<McpConfig, 'apiUrl' | 'network' | 'assets' | 'rpcUrl' | 'limits'>;
  /** Set in discovery-only mode: how to add a wallet. */
  noWallet: string | undefined;
  /** The paying wallet, for the transactions it sends itself (a channel's timed withdrawal). */
  account?: LocalAccount | undefined;
}

const INSTRUCTIONS = `Skill Market: paid HTTP skills an agent can call, paid per call in USDC (x402).
Find a skill with search_skills, read it with get_skill (its inputSchema tells you the input to build), then call_skill.
Every call is paid from the owner's wallet within limits they set (per-call maximum, a budget per period, an optional allow-list);
a refused call pays nothing. wallet_status shows what is left; recent_calls lists what was paid.
Cheap skills are paid over payment channels (a deposit, then signed vouchers): payment_channels lists them, get_money_back returns what a channel's server did not charge.`;

export function createMcpServer(deps: ServerDeps): McpServer {
  const { market, budget, config } = deps;
  const server = new McpServer({ name: 'skill-market', version: VERSION }, { instructions: INSTRUCTIONS });
  registerDiscoveryTools(server, market);
  registerPayingTools(server, {
    payments: new Payments(market, budget, config.limits, deps.noWallet),
    budget,
    config,
    noWallet: deps.noWallet,
    channels: () => market.channels(),
  });
  registerChannelTools(server, { market, rpcUrl: config.rpcUrl, account: deps.account });
  return server;
}
