import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { SkillMarket, type SkillMarketOptions } from 'skill-market/client';
import { DEFAULT_NETWORK, formatPriceUsd } from 'skill-market/x402';
import { ConfigError } from '../../config';
import { readMcpConfig, type McpConfig } from '../../mcp/config';
import { MCP_PATH, serveMcpOverHttp } from '../../mcp/http';
import { PersistentBudget } from '../../mcp/ledger';
import { printConfigSnippets } from '../../mcp/print-config';
import { createMcpServer, type ServerDeps } from '../../mcp/server';
import { openWallet } from '../../mcp/wallet';
import { readPassphrase } from '../consumer';
import { devEnvironment } from '../../dev/profile';
import { readCredentials } from '../credentials';

/**
 * `market mcp [--http [--port N] [--host H]] [limits…]`: the MCP server for agents, on stdio (what
 * desktop agents spawn) or Streamable HTTP. stdout carries protocol messages only; every log line
 * goes to stderr. `--print-config` prints snippets for agent hosts' config files instead.
 */
export async function mcpCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: false,
    strict: true,
    options: {
      'api-url': { type: 'string' },
      keystore: { type: 'string' },
      'max-price': { type: 'string' },
      budget: { type: 'string' },
      period: { type: 'string' },
      'confirm-above': { type: 'string' },
      allow: { type: 'string', multiple: true },
      'data-dir': { type: 'string' },
      http: { type: 'boolean' },
      port: { type: 'string' },
      host: { type: 'string' },
      'print-config': { type: 'boolean' },
      dev: { type: 'string' },
      discovery: { type: 'string', multiple: true },
    },
  });
  void positionals;
  if (values['print-config']) {
    process.stdout.write(printConfigSnippets(values.keystore, process.env, values.dev));
    return;
  }
  // --dev: the dev marketplace and its demo wallet, over what the shell says (flags still win).
  const env = values.dev === undefined ? process.env : { ...process.env, ...devEnvironment(values.dev) };
  const prompt =
    values.http && process.stdin.isTTY
      ? () =>
          readPassphrase(env, { confirm: false }).catch((error: Error) => {
            throw new ConfigError('MARKET_KEYSTORE_PASSPHRASE', `was not given: ${error.message}`);
          })
      : undefined;
  const config = await readMcpConfig(values, env, values.dev === undefined ? await readCredentials(env) : {}, prompt);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const deps = await dependencies(config, log);
  if (config.http) {
    const server = serveMcpOverHttp(deps, config.http);
    log(
      `market mcp: Streamable HTTP on http://${config.http.host}:${server.port}${MCP_PATH}${config.http.token ? ' (bearer token required)' : ''}`,
    );
    return;
  }
  const server = createMcpServer(deps);
  await server.connect(new StdioServerTransport());
  // The host closing our stdin is the end of the session.
  // Usage records still in flight are sent first.
  process.stdin.once('end', () => void Promise.allSettled([server.close(), deps.market.flush()]).finally(() => process.exit(0)));
}

async function dependencies(config: McpConfig, log: (line: string) => void): Promise<ServerDeps> {
  const wallet = await openWallet(config.wallet, log);
  const options: SkillMarketOptions = {
    apiUrl: config.apiUrl,
    assets: config.assets.map((address) => ({ network: config.network ?? DEFAULT_NETWORK, address })),
    maxPrice: formatPriceUsd(config.limits.maxPrice),
    // Payment channels live beside spending.json; their deposits follow the SDK's one deposit policy,
    // each never above what the period's budget leaves (Payments.call caps it per call).
    channels: join(config.dataDir, 'channels.json'),
  };
  if (config.apiKey) options.apiKey = config.apiKey;
  if (config.discovery.length > 0) options.discovery = config.discovery;
  if (config.network) options.network = config.network;
  // With an RPC, a call whose answer was lost is settled from the chain (charged yes or no), not left unknown.
  if (config.rpcUrl) options.rpcUrl = config.rpcUrl;
  if (wallet) options.wallet = wallet;
  const market = new SkillMarket(options);
  const { limits } = config;
  log(
    `market mcp: ${wallet ? `paying from ${wallet.address}` : 'discovery only (no wallet)'}; at most ${formatPriceUsd(limits.maxPrice)} a call, ${formatPriceUsd(limits.budget)} a ${limits.period}` +
      `${limits.confirmAbove !== undefined ? `, confirmation above ${formatPriceUsd(limits.confirmAbove)}` : ''}${limits.allow ? `, only ${[...limits.allow].join(', ')}` : ''}; record in ${config.dataDir}`,
  );
  return {
    market,
    budget: new PersistentBudget(config.dataDir, limits.budget, limits.period),
    config,
    noWallet: config.wallet.type === 'none' ? config.wallet.reason : undefined,
    account: wallet,
  };
}
