/**
 * Everything `market mcp` reads from flags and the environment, read and checked here once: the
 * registry, the wallet source, the spending limits, where the budget file lives, and the HTTP
 * transport. A bad value stops the server at start with the variable's name, never mid-call.
 */
import { join, resolve } from 'node:path';
import { parsePrice } from 'skill-market/x402';
import {
  ConfigError,
  read,
  readClientChain,
  readDiscovery,
  readConfigDir,
  readKeystorePassphrase,
  readKeystorePath,
  readRegistryConnection,
  type Env,
} from '../config';
import { readHost, readPort } from '../config/env';

export type BudgetPeriod = 'hour' | 'day' | 'week' | 'month';
const BUDGET_PERIODS: readonly BudgetPeriod[] = ['hour', 'day', 'week', 'month'];

/** The owner's limits, in atomic micro-USDC. */
export interface Limits {
  /** Highest price of any one call. */
  maxPrice: bigint;
  /** Most spent per period, persisted across restarts. */
  budget: bigint;
  period: BudgetPeriod;
  /** Calls priced above this are refused until the owner raises it; undefined: no threshold. */
  confirmAbove: bigint | undefined;
  /** Skill slugs and creator addresses (lowercase) allowed; undefined: every skill. */
  allow: ReadonlySet<string> | undefined;
}

/** Where the paying key comes from; `none` is discovery-only. */
export type WalletSource =
  | { type: 'keystore'; path: string; passphrase: string }
  | { type: 'raw-key'; key: string }
  | { type: 'none'; reason: string };

export interface McpConfig {
  apiUrl: string;
  apiKey: string | undefined;
  network: string | undefined;
  /** Tokens allowed besides the network's USDC (addresses on `network`). */
  assets: string[];
  /** Read for the wallet balance only; undefined: the network's public RPC, if any. */
  rpcUrl: string | undefined;
  wallet: WalletSource;
  limits: Limits;
  /** Holds spending.json (budget and the record of paid calls). */
  dataDir: string;
  /** Other catalogues (Bazaar discovery base URLs) search_skills reads beside the registry: --discovery, MARKET_DISCOVERY. */
  discovery: string[];
  http: { port: number; host: string; token: string | undefined } | undefined;
}

export interface McpFlags {
  'api-url'?: string | undefined;
  keystore?: string | undefined;
  'max-price'?: string | undefined;
  budget?: string | undefined;
  period?: string | undefined;
  'confirm-above'?: string | undefined;
  allow?: string[] | undefined;
  'data-dir'?: string | undefined;
  http?: boolean | undefined;
  port?: string | undefined;
  host?: string | undefined;
  discovery?: string[] | undefined;
}

/** Safe defaults: an agent in a loop can spend at most $1 a day, 10 cents a call. */
const DEFAULT_LIMITS = { maxPrice: '$0.10', budget: '$1', period: 'day' as BudgetPeriod };
const DEFAULT_MCP_PORT = 3005;

/**
 * Flags win over variables. Wallet: --keystore / MARKET_KEYSTORE (passphrase from
 * MARKET_KEYSTORE_PASSPHRASE or the file MARKET_KEYSTORE_PASSPHRASE_FILE), else the raw key in
 * MARKET_MCP_PRIVATE_KEY (unsafe, explicit), else none (discovery only).
 */
export async function readMcpConfig(
  flags: McpFlags,
  env: Env,
  stored: { apiUrl?: string; apiKey?: string } = {},
  /** Asks for the passphrase when neither variable gives it (a terminal with --http; never on stdio, which carries the protocol). */
  prompt?: () => Promise<string>,
): Promise<McpConfig> {
  const { apiUrl, apiKey } = readRegistryConnection(env, { 'api-url': flags['api-url'] }, stored);
  const limits: Limits = {
    maxPrice: amount(flags['max-price'] ?? read(env, 'MARKET_MCP_MAX_PRICE') ?? DEFAULT_LIMITS.maxPrice, 'MARKET_MCP_MAX_PRICE'),
    budget: amount(flags.budget ?? read(env, 'MARKET_MCP_BUDGET') ?? DEFAULT_LIMITS.budget, 'MARKET_MCP_BUDGET'),
    period: period(flags.period ?? read(env, 'MARKET_MCP_BUDGET_PERIOD') ?? DEFAULT_LIMITS.period),
    confirmAbove: optionalAmount(flags['confirm-above'] ?? read(env, 'MARKET_MCP_CONFIRM_ABOVE'), 'MARKET_MCP_CONFIRM_ABOVE'),
    allow: allowList(flags.allow ?? read(env, 'MARKET_MCP_ALLOW')?.split(',')),
  };
  const { network, assets, rpcUrl } = readClientChain(env);
  return {
    apiUrl,
    apiKey,
    network,
    assets: assets.map((asset) => asset.address),
    rpcUrl,
    wallet: await walletSource(flags, env, prompt),
    limits,
    dataDir: resolve(flags['data-dir'] ?? read(env, 'MARKET_MCP_DATA_DIR') ?? join(readConfigDir(env), 'mcp')),
    discovery: readDiscovery(env, flags),
    http: flags.http ? httpSettings(flags, env) : undefined,
  };
}

async function walletSource(flags: McpFlags, env: Env, prompt: (() => Promise<string>) | undefined): Promise<WalletSource> {
  const keystore = flags.keystore ?? readKeystorePath(env);
  const rawKey = read(env, 'MARKET_MCP_PRIVATE_KEY');
  if (keystore !== undefined && rawKey !== undefined)
    throw new ConfigError('MARKET_MCP_PRIVATE_KEY', 'is set together with a keystore: keep one wallet source');
  if (keystore !== undefined) return { type: 'keystore', path: resolve(keystore), passphrase: await passphrase(env, prompt) };
  if (rawKey !== undefined) return { type: 'raw-key', key: rawKey };
  return {
    type: 'none',
    reason:
      'no wallet configured: set MARKET_KEYSTORE (a keystore from `market wallet new`) and MARKET_KEYSTORE_PASSPHRASE or MARKET_KEYSTORE_PASSPHRASE_FILE',
  };
}

/** stdio MCP has no terminal to prompt on, so the passphrase comes from a variable or a file. */
async function passphrase(env: Env, prompt: (() => Promise<string>) | undefined): Promise<string> {
  const direct = readKeystorePassphrase(env);
  if (direct !== undefined) return direct;
  const file = read(env, 'MARKET_KEYSTORE_PASSPHRASE_FILE');
  if (file === undefined && prompt) return prompt();
  if (file === undefined)
    throw new ConfigError(
      'MARKET_KEYSTORE_PASSPHRASE',
      'is required to open the keystore (or MARKET_KEYSTORE_PASSPHRASE_FILE naming a file that holds it)',
    );
  const text = await Bun.file(file)
    .text()
    .catch((error: Error) => {
      throw new ConfigError('MARKET_KEYSTORE_PASSPHRASE_FILE', `cannot be read: ${error.message}`);
    });
  // A trailing newline from `echo … > file` is not part of the passphrase.
  return text.replace(/\r?\n$/, '');
}

function httpSettings(flags: McpFlags, env: Env): McpConfig['http'] {
  const host = flags.host ?? readHost(env, 'MARKET_MCP_HOST', '127.0.0.1');
  const port =
    flags.port === undefined
      ? readPort(env, 'MARKET_MCP_PORT', DEFAULT_MCP_PORT)
      : readPort({ PORT: flags.port }, 'PORT', DEFAULT_MCP_PORT);
  const token = read(env, 'MARKET_MCP_TOKEN');
  if (!isLoopback(host) && (token === undefined || token.length < 24)) {
    throw new ConfigError(
      'MARKET_MCP_TOKEN',
      `is required (24+ characters) to serve MCP on ${host}: anyone reaching the port could spend the wallet`,
    );
  }
  if (token !== undefined && token.length < 24) throw new ConfigError('MARKET_MCP_TOKEN', 'must be at least 24 characters');
  return { host, port, token };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function amount(value: string, name: string): bigint {
  try {
    return parsePrice(value);
  } catch (error) {
    throw new ConfigError(name, `must be a USDC amount such as "$0.10", got "${value.slice(0, 40)}" (${(error as Error).message})`);
  }
}

function optionalAmount(value: string | undefined, name: string): bigint | undefined {
  return value === undefined ? undefined : amount(value, name);
}

function period(value: string): BudgetPeriod {
  if ((BUDGET_PERIODS as readonly string[]).includes(value)) return value as BudgetPeriod;
  throw new ConfigError('MARKET_MCP_BUDGET_PERIOD', `must be one of ${BUDGET_PERIODS.join(', ')}, got "${value.slice(0, 40)}"`);
}

function allowList(items: string[] | undefined): ReadonlySet<string> | undefined {
  const entries = (items ?? [])
    .flatMap((i) => i.split(','))
    .map((i) => i.trim().toLowerCase())
    .filter(Boolean);
  return entries.length === 0 ? undefined : new Set(entries);
}
