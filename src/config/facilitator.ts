import { concat, getAddress, keccak256, stringToHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  ADDRESS_PATTERN,
  BYTES32_PATTERN,
  DEFAULT_NETWORK,
  getKnownNetwork,
  SETTLEMENT_MODES,
  type Caip2Network,
  type SettlementMode,
} from 'skill-market/x402';
import { readNetwork, readRpcUrl } from './chain';
import { readDatabaseConfig, type DatabaseConfig } from './database';
import { ConfigError, type Env, read, readBoolean, readChoice, readHost, readInteger, readPort } from './env';
import { readMetricsConfig, type MetricsConfig } from './metrics';
import { LOG_LEVELS, RUN_MODES, type LogLevel, type RunMode } from './modes';

/** A secret bound to one channel receiver (FACILITATOR_RECEIVER_KEYS). */
export interface ReceiverKey {
  receiver: Address;
  key: string;
}

/** Everything `market facilitator` reads from its environment, validated once at start. */
export interface FacilitatorConfig {
  mode: RunMode;
  host: string;
  port: number;
  database: DatabaseConfig;
  logLevel: LogLevel;
  bodyLimitBytes: number;
  /** The one network this facilitator settles on (CAIP-2). */
  network: Caip2Network;
  /** JSON-RPC endpoint of that network. */
  rpcUrl: string;
  /** Relayer keys that pay gas and submit transfers (one lane each). Never logged. */
  relayerPrivateKeys: readonly Hex[];
  /**
   * The `batch-settlement` receiver authorizer's key (FACILITATOR_AUTHORIZER_KEY): resource servers
   * may name its address (advertised in /supported) as their channels' `receiverAuthorizer`, and it
   * signs their claims and refunds. Unset: derived from the first relayer key (see
   * {@link deriveAuthorizerKey}), stable across restarts. Never logged.
   */
  authorizerPrivateKey?: Hex;
  /** Tokens accepted (checksummed): the network's USDC plus FACILITATOR_ASSETS. */
  assets: readonly Address[];
  /** How long a settle waits for the receipt before answering `settlement_pending`. */
  receiptTimeoutMs: number;
  /** Receipt polling interval. */
  pollIntervalMs: number;
  /** How often the reconciler looks at pending transactions. */
  reconcileIntervalMs: number;
  /** When non-empty, /verify and /settle need `Authorization: Bearer <one of these>`. */
  apiKeys: readonly string[];
  /**
   * Keys bound to a channel receiver (FACILITATOR_RECEIVER_KEYS): a refund our receiver authorizer
   * signs needs `Authorization: Bearer <a key bound to the channel's receiver>`, the receiver's
   * consent. A bound key also passes the FACILITATOR_API_KEYS check. Never logged.
   */
  receiverKeys: readonly ReceiverKey[];
  /**
   * An open facilitator (FACILITATOR_OPEN): our receiver authorizer signs the channel claims anyone
   * posts, as the x402 reference facilitators do, so whoever holds a payer's voucher may claim it up
   * to its maximum. Closed, a claim it signs needs a key bound to every row's receiver
   * (`receiverKeys`). Refunds it signs need the receiver's key either way. Default: closed when
   * NODE_ENV=production, open otherwise (`market dev`, tests).
   */
  open: boolean;
  /**
   * How a settle answers when the resource server does not ask (`X-Settlement-Mode`):
   * `confirmed` (default: standard x402 resource servers take success as mined) or `broadcast`.
   */
  settlementMode: SettlementMode;
  /**
   * Authorizations settled per transaction (Multicall3 `aggregate3`); 1 (default) settles each in
   * its own transaction. Batching saves gas per payment but makes each settle wait for its batch.
   */
  batchMaxSize: number;
  /** How long the first queued authorization waits for its batch to fill before it is sent anyway. */
  batchWaitMs: number;
  /**
   * Send a batch as soon as a relayer is free rather than when it is full or `batchWaitMs` passed:
   * no added wait at low load (a payment alone goes as a plain transfer), and under load the
   * payments arriving while transactions are being sent share the next one.
   */
  batchEager: boolean;
  /**
   * How often the Bazaar catalogue reads each catalogued resource's live 402 again
   * (FACILITATOR_DISCOVERY_REFRESH_MS): it lists what the resource asks now.
   */
  discoveryRefreshMs: number;
  /** Longest wait for one resource's live 402 (FACILITATOR_DISCOVERY_TIMEOUT_MS). */
  discoveryTimeoutMs: number;
  /**
   * Read the live 402 of resources on loopback, private and link-local addresses
   * (FACILITATOR_DISCOVERY_ALLOW_PRIVATE). Default: only in development; in production a payment's
   * declaration must not turn the facilitator into a probe of its own network (SSRF).
   */
  discoveryAllowPrivate: boolean;
  /** Prometheus metrics: METRICS, METRICS_TOKEN, METRICS_PORT, METRICS_HOST (see {@link MetricsConfig}). */
  metrics: MetricsConfig;
}

export const FACILITATOR_DEFAULTS = {
  host: '0.0.0.0',
  port: 3001,
  network: DEFAULT_NETWORK,
  logLevel: 'info',
  bodyLimitBytes: 64 * 1024,
  receiptTimeoutMs: 10_000,
  pollIntervalMs: 250,
  reconcileIntervalMs: 5_000,
  settlementMode: 'confirmed' as SettlementMode,
  batchMaxSize: 1,
  batchWaitMs: 100,
  batchEager: false,
  discoveryRefreshMs: 300_000,
  discoveryTimeoutMs: 5_000,
} as const;

/**
 * Reads the facilitator configuration. Throws `ConfigError` naming the variable on a bad value;
 * a bad private key is reported by position, never echoed. `overrides` win (used by tests).
 */
export function loadFacilitatorConfig(env: Env, cwd = process.cwd(), overrides: Partial<FacilitatorConfig> = {}): FacilitatorConfig {
  const network = readNetwork(env, 'FACILITATOR_NETWORK');
  const mode = readChoice(env, 'NODE_ENV', RUN_MODES, 'development');
  const host = readHost(env, 'HOST', FACILITATOR_DEFAULTS.host);
  return {
    mode,
    host,
    port: readPort(env, 'PORT', FACILITATOR_DEFAULTS.port),
    database: readDatabaseConfig(env, cwd),
    logLevel: readChoice(env, 'LOG_LEVEL', LOG_LEVELS, FACILITATOR_DEFAULTS.logLevel),
    bodyLimitBytes: readInteger(env, 'MARKET_BODY_LIMIT', FACILITATOR_DEFAULTS.bodyLimitBytes, 1024, 64 * 1024 * 1024),
    network,
    rpcUrl: readRpcUrl(env, 'FACILITATOR_RPC_URL', network),
    relayerPrivateKeys: readPrivateKeys(env),
    ...readAuthorizerKey(env),
    assets: readAssets(env, network),
    receiptTimeoutMs: readInteger(env, 'FACILITATOR_RECEIPT_TIMEOUT_MS', FACILITATOR_DEFAULTS.receiptTimeoutMs, 0, 600_000),
    pollIntervalMs: readInteger(env, 'FACILITATOR_POLL_INTERVAL_MS', FACILITATOR_DEFAULTS.pollIntervalMs, 10, 60_000),
    reconcileIntervalMs: readInteger(env, 'FACILITATOR_RECONCILE_INTERVAL_MS', FACILITATOR_DEFAULTS.reconcileIntervalMs, 100, 3_600_000),
    apiKeys: readApiKeys(env),
    receiverKeys: readReceiverKeys(env),
    open: readBoolean(env, 'FACILITATOR_OPEN', mode !== 'production'),
    settlementMode: readChoice(env, 'FACILITATOR_SETTLEMENT', SETTLEMENT_MODES, FACILITATOR_DEFAULTS.settlementMode),
    batchMaxSize: readInteger(env, 'FACILITATOR_BATCH_MAX', FACILITATOR_DEFAULTS.batchMaxSize, 1, 200),
    batchWaitMs: readInteger(env, 'FACILITATOR_BATCH_MS', FACILITATOR_DEFAULTS.batchWaitMs, 1, 60_000),
    batchEager: readBoolean(env, 'FACILITATOR_BATCH_EAGER', FACILITATOR_DEFAULTS.batchEager),
    discoveryRefreshMs: readInteger(env, 'FACILITATOR_DISCOVERY_REFRESH_MS', FACILITATOR_DEFAULTS.discoveryRefreshMs, 1_000, 86_400_000),
    discoveryTimeoutMs: readInteger(env, 'FACILITATOR_DISCOVERY_TIMEOUT_MS', FACILITATOR_DEFAULTS.discoveryTimeoutMs, 100, 60_000),
    discoveryAllowPrivate: readBoolean(env, 'FACILITATOR_DISCOVERY_ALLOW_PRIVATE', mode === 'development'),
    metrics: readMetricsConfig(env, mode, host),
    ...overrides,
  };
}

function readPrivateKeys(env: Env): Hex[] {
  const raw = read(env, 'FACILITATOR_PRIVATE_KEY');
  if (raw === undefined)
    throw new ConfigError('FACILITATOR_PRIVATE_KEY', 'is required: the relayer key (0x + 64 hex; comma-separated for a pool)');
  const entries = raw.split(',').map((s) => s.trim());
  const keys: Hex[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    const where = entries.length > 1 ? ` (entry ${i + 1} of ${entries.length})` : '';
    if (!BYTES32_PATTERN.test(entry) || !isUsableKey(entry as Hex)) {
      throw new ConfigError('FACILITATOR_PRIVATE_KEY', `must be a 0x-prefixed 64-hex secp256k1 private key${where}`);
    }
    if (seen.has(entry.toLowerCase())) throw new ConfigError('FACILITATOR_PRIVATE_KEY', `lists the same key twice${where}`);
    seen.add(entry.toLowerCase());
    keys.push(entry as Hex);
  }
  return keys;
}

function readAuthorizerKey(env: Env): { authorizerPrivateKey?: Hex } {
  const raw = read(env, 'FACILITATOR_AUTHORIZER_KEY');
  if (raw === undefined) return {};
  if (!BYTES32_PATTERN.test(raw) || !isUsableKey(raw as Hex)) {
    throw new ConfigError('FACILITATOR_AUTHORIZER_KEY', 'must be a 0x-prefixed 64-hex secp256k1 private key');
  }
  return { authorizerPrivateKey: raw as Hex };
}

/**
 * The receiver authorizer key of a facilitator given none: a hash of its first relayer key under a
 * fixed label, so it is stable across restarts (channels name its address for their lifetime) and
 * differs from the relayer. Set FACILITATOR_AUTHORIZER_KEY in production to keep the two apart.
 *
 * @example deriveAuthorizerKey(config.relayerPrivateKeys[0]) // 0x… (64 hex)
 */
export function deriveAuthorizerKey(relayerKey: Hex): Hex {
  return keccak256(concat([stringToHex('x402 batch-settlement receiver authorizer'), relayerKey]));
}

function isUsableKey(key: Hex): boolean {
  try {
    privateKeyToAccount(key);
    return true;
  } catch {
    return false;
  }
}

function readAssets(env: Env, network: Caip2Network): Address[] {
  const raw = read(env, 'FACILITATOR_ASSETS');
  const extra = raw === undefined ? [] : raw.split(',').map((s) => s.trim());
  const assets: Address[] = [];
  const known = getKnownNetwork(network)?.usdc.address;
  if (known) assets.push(known);
  for (const entry of extra) {
    if (!ADDRESS_PATTERN.test(entry))
      throw new ConfigError('FACILITATOR_ASSETS', `must be comma-separated token addresses (0x + 40 hex), got "${entry.slice(0, 64)}"`);
    const address = getAddress(entry.toLowerCase());
    if (!assets.includes(address)) assets.push(address);
  }
  if (assets.length === 0) throw new ConfigError('FACILITATOR_ASSETS', `must list at least one token: ${network} has no built-in USDC`);
  return assets;
}

/** FACILITATOR_API_KEYS: comma-separated secrets of at least 16 characters; unset means open. */
function readApiKeys(env: Env): string[] {
  const raw = read(env, 'FACILITATOR_API_KEYS');
  if (raw === undefined) return [];
  const keys = raw.split(',').map((k) => k.trim());
  if (keys.some((k) => k.length < 16 || /\s/.test(k))) {
    throw new ConfigError('FACILITATOR_API_KEYS', 'must be comma-separated keys of at least 16 characters without spaces');
  }
  return keys;
}

/**
 * FACILITATOR_RECEIVER_KEYS: comma-separated `<receiver address>=<key>` (keys of at least 16
 * characters without spaces; a receiver may have several); unset means none. Errors name the
 * entry by position, never echo a key.
 */
function readReceiverKeys(env: Env): ReceiverKey[] {
  const raw = read(env, 'FACILITATOR_RECEIVER_KEYS');
  if (raw === undefined) return [];
  const entries = raw.split(',').map((s) => s.trim());
  return entries.map((entry, i) => {
    const where = entries.length > 1 ? ` (entry ${i + 1} of ${entries.length})` : '';
    const at = entry.indexOf('=');
    const receiver = at < 0 ? '' : entry.slice(0, at).trim();
    const key = at < 0 ? '' : entry.slice(at + 1).trim();
    if (!ADDRESS_PATTERN.test(receiver) || key.length < 16 || /\s/.test(key)) {
      throw new ConfigError(
        'FACILITATOR_RECEIVER_KEYS',
        `must be comma-separated <receiver address>=<key> (0x + 40 hex, a key of at least 16 characters without spaces)${where}`,
      );
    }
    return { receiver: getAddress(receiver.toLowerCase()), key };
  });
}
