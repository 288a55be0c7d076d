/**
 * `market mcp --print-config`: ready snippets for the config files of agent hosts, pointing at
 * this very binary (or `bun src/cli/main.ts` when run from source).
 */
import { defaultKeystorePath } from '../cli/credentials';
import { type Env, readKeystorePath, readRegistryConnection } from '../config';

export function printConfigSnippets(keystore: string | undefined, environment: Env): string {
  const fromSource = /\.(ts|js)$/.test(process.argv[1] ?? '');
  const command = process.execPath;
  const args = fromSource ? [process.argv[1]!, 'mcp'] : ['mcp'];
  const env = {
    MARKET_API_URL: readRegistryConnection(environment).apiUrl,
    MARKET_KEYSTORE: keystore ?? readKeystorePath(environment) ?? defaultKeystorePath('0xYOUR_WALLET_ADDRESS', environment),
    MARKET_KEYSTORE_PASSPHRASE_FILE: '/path/to/a/file/holding/the/passphrase',
    MARKET_MCP_MAX_PRICE: '$0.10',
    MARKET_MCP_BUDGET: '$1',
    MARKET_MCP_BUDGET_PERIOD: 'day',
  };
  const server = { command, args, env };
  return [
    '# Claude Desktop (claude_desktop_config.json), Cursor (~/.cursor/mcp.json), Windsurf and most hosts:',
    JSON.stringify({ mcpServers: { 'skill-market': server } }, null, 2),
    '',
    '# VS Code (.vscode/mcp.json):',
    JSON.stringify({ servers: { 'skill-market': { type: 'stdio', ...server } } }, null, 2),
    '',
    '# Without MARKET_KEYSTORE the server runs discovery-only (search and read skills, no payments).',
    '',
  ].join('\n');
}
