/**
 * `market mcp` reads its settings in one place: limits as exact amounts, the wallet from a
 * keystore (passphrase from a variable or a file) or, only when asked explicitly, a raw key, and
 * an HTTP transport that will not listen beyond loopback without a token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { ConfigError } from '../../src/config/env';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { readMcpConfig } from '../../src/mcp/config';
import { openWallet } from '../../src/mcp/wallet';
import { keystoreFor, PASSPHRASE, tempDir } from './support';

let home: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  home = await tempDir();
});
afterAll(async () => home?.remove());
const env = (extra: Record<string, string> = {}) => ({ HOME: home.path, ...extra });

describe('market mcp configuration', () => {
  it('defaults to safe limits and discovery-only without a wallet', async () => {
    const config = await readMcpConfig({}, env());
    expect(config.limits).toEqual({ maxPrice: 100_000n, budget: 1_000_000n, period: 'day', confirmAbove: undefined, allow: undefined });
    expect(config.wallet.type).toBe('none');
    expect(config.dataDir).toBe(`${home.path}/.config/skill-market/mcp`);
    expect(config.http).toBeUndefined();
  });

  it('reads the other catalogues search_skills searches from --discovery over MARKET_DISCOVERY', async () => {
    expect((await readMcpConfig({}, env())).discovery).toEqual([]);
    expect((await readMcpConfig({}, env({ MARKET_DISCOVERY: 'https://a.example,https://b.example' }))).discovery).toEqual([
      'https://a.example',
      'https://b.example',
    ]);
    expect((await readMcpConfig({ discovery: ['https://c.example'] }, env({ MARKET_DISCOVERY: 'https://a.example' }))).discovery).toEqual([
      'https://c.example',
    ]);
  });

  it('takes limits from flags over variables, allow-list entries lowercased', async () => {
    const config = await readMcpConfig(
      { budget: '$5', allow: ['Weather-Now', '0xABC'] },
      env({ MARKET_MCP_BUDGET: '$2', MARKET_MCP_MAX_PRICE: '0.5', MARKET_MCP_BUDGET_PERIOD: 'week', MARKET_MCP_CONFIRM_ABOVE: '$0.25' }),
    );
    expect(config.limits).toEqual({
      maxPrice: 500_000n,
      budget: 5_000_000n,
      period: 'week',
      confirmAbove: 250_000n,
      allow: new Set(['weather-now', '0xabc']),
    });
  });

  it('reads the keystore passphrase from a file, without its trailing newline', async () => {
    const file = `${home.path}/passphrase`;
    await Bun.write(file, 'secret words here\n');
    const config = await readMcpConfig({}, env({ MARKET_KEYSTORE: '/k.json', MARKET_KEYSTORE_PASSPHRASE_FILE: file }));
    expect(config.wallet).toEqual({ type: 'keystore', path: '/k.json', passphrase: 'secret words here' });
  });

  it('asks for the passphrase when a prompt is possible and no variable gives it', async () => {
    const config = await readMcpConfig({ http: true }, env({ MARKET_KEYSTORE: '/k.json' }), {}, async () => 'typed at the terminal');
    expect(config.wallet).toEqual({ type: 'keystore', path: '/k.json', passphrase: 'typed at the terminal' });
  });

  const refusals: [string, Parameters<typeof readMcpConfig>[0], Record<string, string>, string][] = [
    ['a keystore without a passphrase', {}, { MARKET_KEYSTORE: '/k.json' }, 'MARKET_KEYSTORE_PASSPHRASE'],
    [
      'a keystore and a raw key together',
      {},
      { MARKET_KEYSTORE: '/k.json', MARKET_KEYSTORE_PASSPHRASE: 'p', MARKET_MCP_PRIVATE_KEY: '0x01' },
      'MARKET_MCP_PRIVATE_KEY',
    ],
    ['a budget that is not an amount', {}, { MARKET_MCP_BUDGET: 'lots' }, 'MARKET_MCP_BUDGET'],
    ['an unknown period', {}, { MARKET_MCP_BUDGET_PERIOD: 'fortnight' }, 'MARKET_MCP_BUDGET_PERIOD'],
    ['HTTP beyond loopback without a token', { http: true, host: '0.0.0.0' }, {}, 'MARKET_MCP_TOKEN'],
    ['a short token', { http: true }, { MARKET_MCP_TOKEN: 'short' }, 'MARKET_MCP_TOKEN'],
  ];
  for (const [what, flags, vars, name] of refusals) {
    it(`refuses ${what}, naming ${name}`, async () => {
      const error = await readMcpConfig(flags, env(vars)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(name);
    });
  }

  it('serves HTTP on loopback port 3005 by default', async () => {
    expect((await readMcpConfig({ http: true }, env())).http).toEqual({ host: '127.0.0.1', port: 3005, token: undefined });
  });
});

describe('market mcp --print-config', () => {
  it('prints snippets for agent hosts that are JSON, name the command and keep the key out', async () => {
    const { printConfigSnippets } = await import('../../src/mcp/print-config');
    const text = printConfigSnippets('/home/me/wallet.json', env({ SKILLZ_API_URL: 'https://registry.example' }));
    const blocks = text
      .split(/^# .*$/m)
      .map((b) => b.trim())
      .filter((b) => b.startsWith('{'));
    const [desktop, vscode] = blocks.map((b) => JSON.parse(b));
    expect(desktop.mcpServers['skill-market']).toMatchObject({
      command: process.execPath,
      env: { MARKET_API_URL: 'https://registry.example', MARKET_KEYSTORE: '/home/me/wallet.json', MARKET_MCP_BUDGET: '$1' },
    });
    expect(desktop.mcpServers['skill-market'].args.at(-1)).toBe('mcp');
    expect(vscode.servers['skill-market']).toMatchObject({ type: 'stdio', command: process.execPath });
    expect(text).not.toContain('PRIVATE_KEY');
  });
});

describe('the paying wallet', () => {
  it('opens a keystore with its passphrase, and names MARKET_KEYSTORE when the passphrase is wrong', async () => {
    const key = generatePrivateKey();
    const path = await keystoreFor(key, home.path);
    expect((await openWallet({ type: 'keystore', path, passphrase: PASSPHRASE }, () => {}))?.address).toBe(
      privateKeyToAccount(key).address,
    );
    const error = await openWallet({ type: 'keystore', path, passphrase: 'not the passphrase' }, () => {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('MARKET_KEYSTORE');
  });

  it('takes a raw key only from the explicit variable, with a warning that it is unsafe', async () => {
    const key = generatePrivateKey();
    const config = await readMcpConfig({}, env({ MARKET_MCP_PRIVATE_KEY: key }));
    const warnings: string[] = [];
    expect((await openWallet(config.wallet, (line) => warnings.push(line)))?.address).toBe(privateKeyToAccount(key).address);
    expect(warnings).toEqual([expect.stringContaining('unsafe')]);
    expect(warnings.join('')).not.toContain(key.slice(2));
    expect((await readMcpConfig({}, env({ MARKET_PRIVATE_KEY: key }))).wallet.type).toBe('none');
  });
});
