import { parseArgs } from 'node:util';
import {
  ChannelStoreDamagedError,
  type ChannelOption,
  type ChannelSettingsInput,
  DEFAULT_CHANNELS_DIR,
  DEFAULT_FACILITATOR_URL,
  fileChannelStore,
  hostedChannelStore,
  RegistrationError,
  ServeConfigError,
  SkillDefinitionError,
  VERIFY_MODES,
  serve,
  type ServeOptions,
  type Skills,
  type VerifyMode,
} from 'skill-market/creator';
import { normalizeNetwork, resolveAsset, USDC_DECIMALS, type AssetInfo } from 'skill-market/x402';
import { MarketError } from 'skill-market/registry';
import { type MetricsConfig, readServeEnv, readSkillServerMetricsConfig, readTrustedProxies } from '../../config';
import { createSkillServerMetrics, type SkillServerMetrics, skillServerMetricsRoutes } from '../../creator-metrics';
import { listenMetrics } from '../../metrics';
import { databaseChannelStore } from '../../creator-store';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { type Database, openDatabase, schema } from '../../db';
import { pickFreePort } from '../../dev/ports';
import { FALLBACK_GROUP, readDevProfile, type DevProfile } from '../../dev/profile';
import { ensureGroups, registryClient } from '../creator';
import { createLogger, type Logger } from '../../log';
import { exitOnSignal } from '../../runtime/shutdown';
import { UsageError } from '../errors';
import { terminalText } from '../terminal';
import { SkillModuleError, loadSkillModule } from '../../runtime/skill-module';

/**
 * `market serve <module.ts> [--port N] [--host H] [--wallet W] [--endpoint URL] [--groups a,b]
 * [--facilitator URL] [--api-url URL] [--network eip155:ID] [--asset 0x… [--asset-name N] [--asset-version V] [--asset-decimals D]]
 * [--rpc-url URL] [--settlement broadcast|confirmed] [--verify first|at-settlement] [--no-register]
 * [--channels on|off] [--channels-dir DIR] [--channels-store facilitator] [--repair-channels] [--claim-above PRICE] [--claim-within SECONDS] [--settle-within SECONDS]
 * [--trials-dir DIR] [--trial-ip-wallets N] [--trusted-proxies IP,IP]
 * [--service-name NAME] [--icon-url URL] [--contact EMAIL|URL] [--metrics on|off] [--metrics-port N]`: `--trials-dir` is where free trial
 * calls and volume-price counts are kept (default .market/trials), `--trial-ip-wallets` the new trial wallets one client address
 * may bring per skill and period (default 3), counted for the address `X-Forwarded-For` names when the request comes from one of
 * `--trusted-proxies` (TRUSTED_PROXIES; default none: the socket peer); `--metrics` serves Prometheus
 * metrics at GET /metrics (MARKET_METRICS; on with --dev, else off unless configured), `--metrics-port` on a port of their own
 * (MARKET_METRICS_PORT), MARKET_METRICS_TOKEN asks scrapes for a bearer token (never a flag); `--service-name` and `--icon-url` are what x402 catalogues
 * show for the server (the 402's `resource.serviceName` and `iconUrl`), `--contact` how its /openapi.json
 * says to reach the creator (`info.contact`; default the server's own page); `--asset` is an EIP-3009 token (6 decimals unless `--asset-decimals`) paid instead of the network's USDC (its
 * EIP-712 domain `USD Coin` version `2` unless named otherwise, e.g. a local test token);
 * it loads a creator's skills module and runs the paid skill server. Flags win over MARKET_ENDPOINT,
 * MARKET_FACILITATOR_URL, MARKET_RPC_URL (the chain, asked when a payment's outcome is unknown)
 * and MARKET_NETWORK, MARKET_SETTLEMENT (when a paid call's result leaves: once the transfer is broadcast,
 * the default, or once it is mined), MARKET_VERIFY (when the facilitator verifies a payment: at
 * settlement for payers who already paid here, the default, or before every handler run); wallet, API key and registry URL follow the SDK's
 * order (flag, then MARKET_WALLET_ADDRESS / MARKET_WALLET_KEY / MARKET_API_KEY / MARKET_API_URL,
 * then the SKILLZ_* names). Skills are registered at start when an endpoint is known.
 */
export async function serveCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      wallet: { type: 'string' },
      endpoint: { type: 'string' },
      groups: { type: 'string' },
      facilitator: { type: 'string' },
      'api-url': { type: 'string' },
      network: { type: 'string' },
      asset: { type: 'string' },
      'asset-name': { type: 'string' },
      'asset-version': { type: 'string' },
      'asset-decimals': { type: 'string' },
      'rpc-url': { type: 'string' },
      settlement: { type: 'string' },
      verify: { type: 'string' },
      'no-register': { type: 'boolean' },
      channels: { type: 'string' },
      'channels-dir': { type: 'string' },
      'channels-store': { type: 'string' },
      'repair-channels': { type: 'boolean' },
      'claim-above': { type: 'string' },
      'claim-within': { type: 'string' },
      'settle-within': { type: 'string' },
      'trials-dir': { type: 'string' },
      'trial-ip-wallets': { type: 'string' },
      'trusted-proxies': { type: 'string' },
      dev: { type: 'string' },
      'api-key': { type: 'string' },
      'service-name': { type: 'string' },
      'icon-url': { type: 'string' },
      contact: { type: 'string' },
      metrics: { type: 'string' },
      'metrics-port': { type: 'string' },
    },
  });
  const [file, ...extra] = positionals;
  if (!file) throw new UsageError('serve needs a skills module: market serve <module.ts>');
  if (extra.length > 0) throw new UsageError(`serve takes one module, got also "${extra[0]}"`);
  const env = readServeEnv(process.env);
  let port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) throw new UsageError('--port must be a port number');
  const logger = createLogger(env.logLevel);
  const dev = values.dev === undefined ? undefined : readDevProfile(values.dev);
  if (dev) port ??= await pickFreePort();

  if (values.wallet !== undefined && values.wallet.trim().length === 66) {
    logger.warn('--wallet got a private key, which shows in process listings: pass the address, or the key in MARKET_WALLET_KEY');
  }

  try {
    const skills = await loadSkillModule(file);
    // With --dev, the dev marketplace's values come before the environment (flags still win).
    const network = values.network ?? dev?.network ?? env.network;
    const host = values.host ?? (dev ? '127.0.0.1' : '0.0.0.0');
    const endpoint = values.endpoint ?? (dev ? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}` : env.endpoint);
    const facilitatorUrl = values.facilitator ?? dev?.facilitatorUrl ?? env.facilitatorUrl;
    const rpcUrl = values['rpc-url'] ?? dev?.rpcUrl ?? env.rpcUrl;
    const wallet = values.wallet ?? dev?.creatorAddress;
    const apiUrl = values['api-url'] ?? dev?.apiUrl;
    const apiKey = values['api-key'] ?? dev?.creatorKey;
    const asset = values.asset ?? dev?.asset;
    const settlement = values.settlement ?? env.settlement;
    if (settlement !== undefined && settlement !== 'broadcast' && settlement !== 'confirmed') {
      throw new UsageError('--settlement must be broadcast or confirmed');
    }
    const verify = values.verify ?? env.verify;
    if (verify !== undefined && !(VERIFY_MODES as readonly string[]).includes(verify)) {
      throw new UsageError(`--verify (MARKET_VERIFY) must be ${VERIFY_MODES.join(' or ')}`);
    }
    if (network !== undefined && asset === undefined && !hasBuiltInUsdc(network)) {
      throw new ServeConfigError(
        `${network} has no built-in USDC: pass --asset <token address> (EIP-712 name 'USD Coin', version '2' unless --asset-name / --asset-version say otherwise), or --dev to serve on the marketplace of market dev`,
      );
    }
    const facilitatorApiKey = env.facilitatorApiKey ?? dev?.receiverKey;
    const channels = await channelOption(
      { ...values, 'channels-store': values['channels-store'] ?? (dev?.receiverKey ? 'facilitator' : undefined) },
      env,
      logger,
      { url: facilitatorUrl, apiKey: facilitatorApiKey },
    );
    const ipWallets = values['trial-ip-wallets'];
    if (ipWallets !== undefined && !(/^\d{1,6}$/.test(ipWallets) && Number(ipWallets) >= 1))
      throw new UsageError('--trial-ip-wallets must be a whole number of wallets, at least 1');
    const trustedProxies = values['trusted-proxies'] !== undefined ? proxiesFlag(values['trusted-proxies']) : env.trustedProxies;
    const metricsSetting = values.metrics;
    if (metricsSetting !== undefined && metricsSetting !== 'on' && metricsSetting !== 'off')
      throw new UsageError('--metrics must be on or off');
    const metricsPort = values['metrics-port'];
    if (metricsPort !== undefined && !(/^\d{1,5}$/.test(metricsPort) && Number(metricsPort) <= 65_535))
      throw new UsageError('--metrics-port must be a port number');
    const metricsConfig = readSkillServerMetricsConfig(
      {
        ...process.env,
        ...(metricsSetting !== undefined ? { MARKET_METRICS: String(metricsSetting === 'on') } : {}),
        ...(metricsPort !== undefined ? { MARKET_METRICS_PORT: metricsPort } : {}),
      },
      dev !== undefined,
      host,
    );
    const metrics = metricsConfig.enabled ? createSkillServerMetrics(logger) : undefined;
    const options: ServeOptions = {
      logger,
      ...(metrics ? { observe: metrics.observer, routes: skillServerMetricsRoutes(metrics, metricsConfig, logger) } : {}),
      channels: channels.option,
      ...(env.receiptKey !== undefined ? { receiptKey: env.receiptKey } : {}),
      ...(values['trials-dir'] !== undefined || ipWallets !== undefined || trustedProxies.length > 0
        ? {
            trials: {
              ...(values['trials-dir'] !== undefined ? { store: values['trials-dir'] } : {}),
              ...(ipWallets !== undefined ? { ipWallets: Number(ipWallets) } : {}),
              ...(trustedProxies.length > 0 ? { trustedProxies } : {}),
            },
          }
        : {}),
      hostname: host,
      ...(port !== undefined ? { port } : {}),
      ...(wallet !== undefined ? { wallet } : {}),
      ...(apiUrl !== undefined ? { apiUrl } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(network !== undefined ? { network } : {}),
      ...(facilitatorUrl !== undefined ? { facilitatorUrl } : {}),
      ...(rpcUrl !== undefined ? { rpcUrl } : {}),
      ...(settlement !== undefined ? { settlement } : {}),
      ...(verify !== undefined ? { verify: verify as VerifyMode } : {}),
      ...(values['service-name'] !== undefined ? { serviceName: values['service-name'] } : {}),
      ...(values['icon-url'] !== undefined ? { iconUrl: values['icon-url'] } : {}),
      ...(values.contact !== undefined ? { openapi: { contact: contactOption(values.contact) } } : {}),
      ...(facilitatorApiKey !== undefined ? { facilitatorApiKey } : {}),
      ...(asset !== undefined
        ? {
            asset: {
              address: asset as AssetInfo['address'],
              name: values['asset-name'] ?? 'USD Coin',
              version: values['asset-version'] ?? '2',
              decimals: assetDecimals(values['asset-decimals']),
            },
          }
        : {}),
    };
    if (endpoint !== undefined && !values['no-register']) {
      const groups = (values.groups ?? '')
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean);
      if (dev) groups.push(...(await devGroups(skills, groups, dev, apiUrl ?? dev.apiUrl, apiKey ?? dev.creatorKey, logger)));
      options.register = { endpoint, ...(groups.length > 0 ? { groups } : {}) };
    } else {
      logger.info('registration off: pass --endpoint <public URL> (or set MARKET_ENDPOINT) to register the skills');
    }
    // A signal while starting (registration can take a few seconds) simply ends the process.
    const early = () => process.exit(0);
    process.once('SIGTERM', early).once('SIGINT', early);
    // A listener of their own is up before the skill server: a scrape sees its first call.
    const metricsListener = metrics && openMetricsListener(metrics, metricsConfig, logger);
    const server = await serve(skills, options)
      .catch(async (error: unknown) => {
        await metricsListener?.stop();
        throw error;
      })
      .finally(() => process.off('SIGTERM', early).off('SIGINT', early));
    metrics?.readChannels(() => server.channelBacklog());
    exitOnSignal(
      async () => {
        await metricsListener?.stop();
        await server.stop();
        await channels.close();
      },
      logger,
      5000,
    ); // running calls may finish, pending call records go out
    if (env.stopWithStdin) {
      // Started by `market dev`: its pipe closing means it is gone, so stop as on SIGTERM.
      process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM')).resume();
    }
  } catch (error) {
    if (
      !(
        error instanceof SkillModuleError ||
        error instanceof ServeConfigError ||
        error instanceof SkillDefinitionError ||
        error instanceof RegistrationError ||
        error instanceof ChannelStoreDamagedError ||
        error instanceof MarketError
      )
    )
      throw error;
    process.stderr.write(`market: ${terminalText(error.message)}\n`);
    process.exitCode = 1;
  }
}

/** The metrics' own listener when `--metrics-port` (MARKET_METRICS_PORT) asks for one; a port taken is said in plain words. */
function openMetricsListener(metrics: SkillServerMetrics, config: MetricsConfig, logger: Logger) {
  try {
    return listenMetrics(metrics.registry, config, logger);
  } catch (error) {
    const where = config.listener ? `${config.listener.host}:${config.listener.port}` : 'its port';
    throw new ServeConfigError(`cannot serve metrics on ${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * `--channels on|off` (MARKET_CHANNELS; default by price), `--channels-dir` (MARKET_CHANNELS_DIR),
 * `--claim-above <price>`, `--claim-within <seconds>`, `--settle-within <seconds>`, the receiver authorizer key from
 * MARKET_RECEIVER_AUTHORIZER_KEY (never a flag: process listings show flags). Where the channels
 * live: `--channels-store facilitator` (MARKET_CHANNELS_STORE; the default with --dev) at the
 * facilitator, with the key it binds to the receiver (MARKET_FACILITATOR_API_KEY), shared by every
 * server of the receiver; else with DATABASE_URL in PostgreSQL (migrated at start), shared by every
 * server using that database; else in files (`--channels-dir`), this server's own. `--repair-channels`
 * opens that folder once keeping what is readable of a damaged snapshot (the damaged file kept
 * beside it, the channels it lost started again from the chain) before the server starts.
 */
async function channelOption(
  values: {
    channels?: string | undefined;
    'channels-dir'?: string | undefined;
    'channels-store'?: string | undefined;
    'repair-channels'?: boolean | undefined;
    'claim-above'?: string | undefined;
    'claim-within'?: string | undefined;
    'settle-within'?: string | undefined;
  },
  env: ReturnType<typeof readServeEnv>,
  logger: Logger,
  facilitator: { url: string | undefined; apiKey: string | undefined },
): Promise<{ option: ChannelOption; close(): Promise<void> }> {
  const mode = values.channels ?? env.channels;
  if (mode !== undefined && mode !== 'on' && mode !== 'off') throw new UsageError('--channels (MARKET_CHANNELS) must be on or off');
  if (mode === 'off') return { option: false, close: async () => {} };
  const seconds = (flag: 'claim-within' | 'settle-within', least: number) => {
    const value = values[flag] === undefined ? undefined : Number(values[flag]);
    if (value !== undefined && (!Number.isInteger(value) || value < least))
      throw new UsageError(`--${flag} must be a whole number of seconds${least > 0 ? ` from ${least}` : ''}`);
    return value;
  };
  const within = seconds('claim-within', 1);
  const settleWithin = seconds('settle-within', 0);
  const option: ChannelSettingsInput = {
    ...(mode === 'on' ? { all: true } : {}),
    ...(values['claim-above'] !== undefined ? { claimAbove: values['claim-above'] } : {}),
    ...(within !== undefined ? { claimWithinMs: within * 1000 } : {}),
    ...(settleWithin !== undefined ? { settleWithinMs: settleWithin * 1000 } : {}),
    ...(env.receiverAuthorizerKey !== undefined ? { receiverAuthorizerKey: env.receiverAuthorizerKey as `0x${string}` } : {}),
  };
  const where = values['channels-store'] ?? env.channelsStore;
  if (where !== undefined && where !== 'facilitator')
    throw new UsageError('--channels-store (MARKET_CHANNELS_STORE) must be facilitator (or unset: files, or PostgreSQL with DATABASE_URL)');
  if (values['repair-channels'] && (where === 'facilitator' || env.databaseUrl !== undefined))
    throw new UsageError(
      '--repair-channels repairs the channel folder of the file store; these channels live at the facilitator or in PostgreSQL',
    );
  if (where === 'facilitator') {
    if (!facilitator.apiKey)
      throw new UsageError(
        '--channels-store facilitator needs the key the facilitator binds to your payout address in MARKET_FACILITATOR_API_KEY (its FACILITATOR_RECEIVER_KEYS)',
      );
    const url = facilitator.url ?? DEFAULT_FACILITATOR_URL;
    logger.info('payment channels kept at the facilitator, shared by every server of this payout address', { facilitator: url });
    return { option: { ...option, store: hostedChannelStore({ url, apiKey: facilitator.apiKey }) }, close: async () => {} };
  }
  if (env.databaseUrl === undefined) {
    const dir = values['channels-dir'] ?? env.channelsDir;
    if (values['repair-channels']) await (await fileChannelStore(dir ?? DEFAULT_CHANNELS_DIR, { repair: true, logger })).close();
    return { option: { ...option, ...(dir !== undefined ? { store: dir } : {}) }, close: async () => {} };
  }
  // Migrated once; then a pool without the registry's per-statement deadline: a call waits for the
  // channel's row lock as long as another instance's call on that channel runs its handler.
  await (await openDatabase({ kind: 'postgres', url: env.databaseUrl, poolSize: 1 })).close();
  const client = postgres(env.databaseUrl, { max: 20, onnotice: () => {} });
  logger.info('payment channels kept in PostgreSQL (DATABASE_URL), shared by every instance of this server');
  const db = drizzle(client, { schema }) as unknown as Database;
  return { option: { ...option, store: databaseChannelStore(db) }, close: () => client.end({ timeout: 1 }) };
}

/**
 * With --dev: makes the groups the skills and --groups name (the demo creator may only use its own),
 * and answers the fallback group `dev` for skills that name none.
 */
async function devGroups(
  skills: Skills,
  given: readonly string[],
  dev: DevProfile,
  apiUrl: string,
  apiKey: string,
  logger: Logger,
): Promise<string[]> {
  const named = Object.values(skills).flatMap((s) => s.groups);
  const fallback = given.length === 0 && Object.values(skills).some((s) => s.groups.length === 0) ? [FALLBACK_GROUP] : [];
  const made = await ensureGroups(registryClient({ apiUrl, apiKey }), dev.creatorAddress, [...given, ...named, ...fallback]);
  if (made.length > 0) logger.info(`made the group${made.length > 1 ? 's' : ''} ${made.join(', ')} for the skills`);
  return fallback;
}

/** False only for a well-formed network without a built-in USDC (a malformed one is refused by serve() in its own words). */
function hasBuiltInUsdc(network: string): boolean {
  try {
    normalizeNetwork(network);
  } catch {
    return true;
  }
  try {
    resolveAsset(network);
    return true;
  } catch {
    return false;
  }
}

/** `--asset-decimals`: the token's decimals, 0 to 36; USDC's 6 when not given. */
function assetDecimals(text: string | undefined): number {
  if (text === undefined) return USDC_DECIMALS;
  if (!/^\d{1,2}$/.test(text) || Number(text) > 36) throw new UsageError('--asset-decimals must be a whole number from 0 to 36');
  return Number(text);
}

/** `--contact`: an http(s) URL, else an email address (serve() checks either). */
function contactOption(text: string): { email: string } | { url: string } {
  return /^https?:\/\//i.test(text.trim()) ? { url: text } : { email: text };
}

/** `--trusted-proxies IP,IP`, read as TRUSTED_PROXIES is, refused as a flag. */
function proxiesFlag(raw: string): string[] {
  try {
    return readTrustedProxies({ TRUSTED_PROXIES: raw });
  } catch (error) {
    throw new UsageError(`--trusted-proxies ${(error as Error).message.replace(/^TRUSTED_PROXIES:?\s*/, '')}`);
  }
}
