/**
 * What the command-line clients (search, info, call, login, wallet, mcp, serve, dev, healthcheck)
 * read from their environment: where the stored login lives, the registry and its key, the
 * network and extra tokens, the paying wallet, and the skill server's settings. Flags win over
 * variables, variables over the stored login; our MARKET_* names come before the SKILLZ_* names
 * existing users have.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_API_URL } from 'skill-market/registry';
import { DEFAULT_NETWORK } from 'skill-market/x402';
import { ConfigError, type Env, read, readChoice, readPostgresUrl } from './env';
import { readTrustedProxies } from './limits';
import { LOG_LEVELS, type LogLevel } from './modes';

/** `$XDG_CONFIG_HOME/skill-market`, else `~/.config/skill-market`: the stored login and the wallets. */
export function readConfigDir(env: Env): string {
  const xdg = read(env, 'XDG_CONFIG_HOME');
  const base = xdg?.startsWith('/') ? xdg : join(read(env, 'HOME') ?? homedir(), '.config');
  return join(base, 'skill-market');
}

/** Where `market wallet new` keeps a wallet's keystore unless --keystore says otherwise. */
export const defaultKeystorePath = (address: string, env: Env) => join(readConfigDir(env), 'wallets', `${address}.json`);

/** The registry a client talks to and the key it shows (none: anonymous). */
export interface RegistryConnection {
  apiUrl: string;
  apiKey: string | undefined;
}

export interface ConnectionFlags {
  'api-url'?: string | undefined;
  'api-key'?: string | undefined;
}

/**
 * URL: --api-url, MARKET_API_URL, SKILLZ_API_URL, the stored login, then `DEFAULT_API_URL`.
 * Key: --api-key, MARKET_API_KEY, SKILLZ_API_KEY, then the stored login. A URL that is not
 * http(s) is refused naming where it came from.
 */
export function readRegistryConnection(
  env: Env,
  flags: ConnectionFlags = {},
  stored: { apiUrl?: string | undefined; apiKey?: string | undefined } = {},
): RegistryConnection {
  const [source, apiUrl] = firstOf([
    ['--api-url', flags['api-url']],
    ['MARKET_API_URL', read(env, 'MARKET_API_URL')],
    ['SKILLZ_API_URL', read(env, 'SKILLZ_API_URL')],
    ['the stored login', stored.apiUrl],
  ]) ?? ['the default', DEFAULT_API_URL];
  if (!isHttpUrl(apiUrl)) throw new ConfigError(source, `must be the registry's http(s) URL, got "${apiUrl.slice(0, 80)}"`);
  const apiKey = firstOf([
    ['--api-key', flags['api-key']],
    ['MARKET_API_KEY', read(env, 'MARKET_API_KEY')],
    ['SKILLZ_API_KEY', read(env, 'SKILLZ_API_KEY')],
    ['the stored login', stored.apiKey],
  ])?.[1];
  return { apiUrl, apiKey };
}

/** An http(s) URL given on the command line (a flag or a dev profile), else a ConfigError naming `source`. */
export function checkRegistryUrl(url: string, source: string): string {
  if (!isHttpUrl(url)) throw new ConfigError(source, `must be the registry's http(s) URL, got "${url.slice(0, 80)}"`);
  return url;
}

/** What a paying client accepts: the network (undefined: the SDK's default) and extra token addresses on it. */
export interface ClientChain {
  network: string | undefined;
  /** Tokens accepted besides the network's USDC. */
  assets: { network: string; address: string }[];
  /** Asked when a payment's outcome is unknown; undefined: not checked on chain. */
  rpcUrl: string | undefined;
}

/** Network: --network, MARKET_NETWORK. Tokens: --asset (repeatable), MARKET_ASSETS (comma-separated). RPC: MARKET_RPC_URL. */
export function readClientChain(env: Env, flags: { network?: string | undefined; asset?: string[] | undefined } = {}): ClientChain {
  const network = flags.network ?? read(env, 'MARKET_NETWORK');
  const addresses = flags.asset ?? list(read(env, 'MARKET_ASSETS'));
  return {
    network,
    assets: addresses.map((address) => ({ network: network ?? DEFAULT_NETWORK, address })),
    rpcUrl: read(env, 'MARKET_RPC_URL'),
  };
}

/**
 * Other catalogues searched beside the registry (Bazaar discovery APIs): --discovery (repeatable),
 * else MARKET_DISCOVERY (comma-separated); each an http(s) base URL. Empty when neither is set.
 */
export function readDiscovery(env: Env, flags: { discovery?: string[] | undefined } = {}): string[] {
  const source = flags.discovery ? '--discovery' : 'MARKET_DISCOVERY';
  const urls = flags.discovery ?? list(read(env, 'MARKET_DISCOVERY'));
  for (const url of urls) {
    if (!isHttpUrl(url)) throw new ConfigError(source, `must be http(s) base URLs of Bazaar discovery APIs, got "${url.slice(0, 80)}"`);
  }
  return urls;
}

/** The paying key given raw: MARKET_PRIVATE_KEY, then SKILLZ_PRIVATE_KEY. Never logged. */
export function readWalletKey(env: Env): string | undefined {
  return read(env, 'MARKET_PRIVATE_KEY') ?? read(env, 'SKILLZ_PRIVATE_KEY');
}

/** MARKET_KEYSTORE_PASSPHRASE as given (spaces are part of a passphrase), or undefined when unset or empty. */
export function readKeystorePassphrase(env: Env): string | undefined {
  const value = env.MARKET_KEYSTORE_PASSPHRASE;
  return value === undefined || value === '' ? undefined : value;
}

/** MARKET_KEYSTORE: the keystore an agent host's MCP server opens. */
export function readKeystorePath(env: Env): string | undefined {
  return read(env, 'MARKET_KEYSTORE');
}

/** `market serve`'s settings from the environment; its flags win over each. */
export interface ServeEnv {
  logLevel: LogLevel;
  network: string | undefined;
  /** The public URL skills are registered under (MARKET_ENDPOINT). */
  endpoint: string | undefined;
  facilitatorUrl: string | undefined;
  facilitatorApiKey: string | undefined;
  rpcUrl: string | undefined;
  /** `broadcast` or `confirmed` (MARKET_SETTLEMENT); checked by the command with its flag. */
  settlement: string | undefined;
  /** `first` or `at-settlement` (MARKET_VERIFY); checked by the command with its flag. */
  verify: string | undefined;
  /** Set by `market dev`: stop when stdin closes. */
  stopWithStdin: boolean;
  /** `on` or `off` (MARKET_CHANNELS); checked by the command with its flag. Unset: by price. */
  channels: string | undefined;
  /** Folder of the channel files (MARKET_CHANNELS_DIR); default `.market/channels`. */
  channelsDir: string | undefined;
  /** `facilitator` (MARKET_CHANNELS_STORE): the facilitator keeps the channels, shared by every server of the receiver. */
  channelsStore: string | undefined;
  /** Private key of the channels' receiver authorizer (MARKET_RECEIVER_AUTHORIZER_KEY); default the facilitator's. */
  receiverAuthorizerKey: string | undefined;
  receiptKey: string | undefined;
  /** TRUSTED_PROXIES: the proxies whose X-Forwarded-For names the client (the free trial wallets per address). */
  trustedProxies: string[];
  /** DATABASE_URL: channels in PostgreSQL, shared by every instance of the server. */
  databaseUrl: string | undefined;
}

/** LOG_LEVEL, MARKET_NETWORK, MARKET_ENDPOINT, MARKET_FACILITATOR_URL, MARKET_FACILITATOR_API_KEY, MARKET_RPC_URL, MARKET_SETTLEMENT, MARKET_VERIFY, MARKET_SERVE_STOP_WITH_STDIN, MARKET_CHANNELS, MARKET_CHANNELS_DIR, MARKET_CHANNELS_STORE, MARKET_RECEIVER_AUTHORIZER_KEY, MARKET_RECEIPT_KEY, TRUSTED_PROXIES, DATABASE_URL. */
export function readServeEnv(env: Env): ServeEnv {
  return {
    logLevel: readChoice(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    network: read(env, 'MARKET_NETWORK'),
    endpoint: read(env, 'MARKET_ENDPOINT'),
    facilitatorUrl: read(env, 'MARKET_FACILITATOR_URL'),
    facilitatorApiKey: read(env, 'MARKET_FACILITATOR_API_KEY'),
    rpcUrl: read(env, 'MARKET_RPC_URL'),
    settlement: read(env, 'MARKET_SETTLEMENT'),
    verify: read(env, 'MARKET_VERIFY'),
    stopWithStdin: read(env, 'MARKET_SERVE_STOP_WITH_STDIN') === '1',
    channels: read(env, 'MARKET_CHANNELS'),
    channelsDir: read(env, 'MARKET_CHANNELS_DIR'),
    channelsStore: read(env, 'MARKET_CHANNELS_STORE'),
    receiverAuthorizerKey: read(env, 'MARKET_RECEIVER_AUTHORIZER_KEY'),
    receiptKey: read(env, 'MARKET_RECEIPT_KEY'),
    trustedProxies: readTrustedProxies(env),
    databaseUrl: readPostgresUrl(env, 'DATABASE_URL'),
  };
}

/** MARKET_DEV_DIR: where `market dev` keeps its state, when no --dir says. */
export function readDevDir(env: Env): string | undefined {
  return read(env, 'MARKET_DEV_DIR');
}

function isHttpUrl(raw: string): boolean {
  return URL.canParse(raw) && /^https?:$/.test(new URL(raw).protocol);
}

function firstOf(sources: [string, string | undefined][]): [string, string] | undefined {
  for (const [source, value] of sources) {
    const trimmed = value?.trim();
    if (trimmed) return [source, trimmed];
  }
  return undefined;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
