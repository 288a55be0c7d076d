/**
 * What the MCP tests share: the client world (registry, facilitator, anvil with our token, a paid
 * skill server), a keystore for a funded payer, and the official MCP client connected to
 * `market mcp` over stdio (spawned from source) or Streamable HTTP.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Hex } from 'viem';
import { encryptKeystore, writeKeystoreFile } from 'skill-market/wallet';
import { CLI_ENTRY, inheritedEnv } from '../support/process';
import { NETWORK, type World } from '../client/support/world';

export const PASSPHRASE = 'correct horse battery staple';

export async function tempDir(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'market-mcp-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A keystore file (cheap scrypt, for tests) holding `privateKey`. */
export async function keystoreFor(privateKey: Hex, dir: string): Promise<string> {
  const path = join(dir, `wallet-${crypto.randomUUID().slice(0, 8)}.json`);
  await writeKeystoreFile(path, await encryptKeystore(privateKey, PASSPHRASE, { scrypt: { n: 1024 } }));
  return path;
}

/** The environment `market mcp` needs to reach the world and pay in its token. */
export function worldEnv(world: World, home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...inheritedEnv(),
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    MARKET_API_URL: world.registryUrl,
    MARKET_NETWORK: NETWORK,
    MARKET_ASSETS: world.asset.address,
    MARKET_RPC_URL: world.chain?.rpcUrl ?? 'http://127.0.0.1:9',
    MARKET_MCP_DATA_DIR: join(home, 'mcp'),
    ...extra,
  };
}

/** The official MCP client talking to `bun src/cli/main.ts mcp` over stdio. */
export async function stdioClient(env: Record<string, string>, args: string[] = []): Promise<Client & { stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_ENTRY, 'mcp', ...args], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'market-tests', version: '1.0.0' });
  await client.connect(transport);
  return Object.assign(client, { stderr: () => stderr });
}

/** The official MCP client connected to a server made in this process (`createMcpServer`). */
export async function inProcessClient(server: McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'market-tests', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

/** Calls a tool; returns the result with its structured content typed loosely. */
export async function tool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult & { structuredContent: Record<string, any> }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: Record<string, any> };
}

export const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
