/**
 * `market mcp --print-config`: ready snippets for the config files of agent hosts, pointing at
 * this very binary (or `bun src/cli/main.ts` when run from source).
 */
import { resolve } from 'node:path';
import { defaultKeystorePath, type Env, readKeystorePath, readRegistryConnection } from '../config';
import { readDevProfile } from '../dev/profile';

/**
 * With `devDir` (`--dev [dir]`), the server runs against that dev marketplace and pays from its demo
 * wallet: the snippet passes `--dev <absolute dir>` and needs no keystore or passphrase.
 */
export function printConfigSnippets(keystore: string | undefined, environment: Env, devDir?: string): string {
  const fromSource = /\.(ts|js)$/.test(process.argv[1] ?? '');
  const command = process.execPath;
  const args = [...(fromSource ? [process.argv[1]!, 'mcp'] : ['mcp']), ...(devDir === undefined ? [] : ['--dev', resolve(devDir)])];
  const limits = { MARKET_MCP_MAX_PRICE: '$0.10', MARKET_MCP_BUDGET: '$1', MARKET_MCP_BUDGET_PERIOD: 'day' };
  if (devDir !== undefined) readDevProfile(devDir); // a clear message now when no dev marketplace is there
  const env =
    devDir !== undefined
      ? limits
      : {
          MARKET_API_URL: readRegistryConnection(environment).apiUrl,
          MARKET_KEYSTORE: keystore ?? readKeystorePath(environment) ?? defaultKeystorePath('0xYOUR_WALLET_ADDRESS', environment),
          MARKET_KEYSTORE_PASSPHRASE_FILE: '/path/to/a/file/holding/the/passphrase',
          ...limits,
        };
  const server = { command, args, env };
  return [
    '# Claude Desktop (claude_desktop_config.json), Cursor (~/.cursor/mcp.json), Windsurf and most hosts:',
    JSON.stringify({ mcpServers: { 'skill-market': server } }, null, 2),
    '',
    '# VS Code (.vscode/mcp.json):',
    JSON.stringify({ servers: { 'skill-market': { type: 'stdio', ...server } } }, null, 2),
    '',
    devDir !== undefined
      ? `# Dev mode: the marketplace of market dev in ${resolve(devDir)}, paid from its demo wallet (test USDC).`
      : '# Without MARKET_KEYSTORE the server runs discovery-only (search and read skills, no payments).',
    '',
  ].join('\n');
}
