import { createPublicClient, http, type Address, type PublicClient } from 'viem';
import { BATCH_SETTLEMENT_SCHEME, UPTO_SCHEME, parseCaip2, type SettleResponse, type SettlementMode } from 'skill-market/x402';
import { ConfigError, deriveAuthorizerKey, FACILITATOR_DEFAULTS, type FacilitatorConfig } from '../config';
import type { DatabaseHandle } from '../db';
import { createLogger, type Logger } from '../log';
import type { PendingWork } from '../runtime/pending';
import { healthRoutes, serverBase } from '../http';
import { httpMetrics, metricsRoute } from '../metrics';
import { createFacilitatorMetrics, withSettlementMetrics } from './metrics';
import { safeError } from './chain';
import {
  createDiscoveryCatalogue,
  extensionResponses,
  facilitatorDiscoveryRoutes,
  REFRESH_DEFAULTS,
  withDiscovery,
  type Outcomes,
  type RefreshReport,
} from './discovery';
import { createHostedChannels, hostedChannelRoutes } from '../creator-store';
import { createRelayerPool } from './relayer';
import { createSchemeOffering } from './offering';
import { facilitatorRoutes } from './routes';
import type { FacilitatorScheme } from './scheme';
import { createChannelScheme, type ResumeReport } from './schemes/channel';
import { createExactScheme, EXACT_SCHEME, type ReconcileReport } from './schemes/exact';
import { createUptoScheme, type UptoReconcileReport } from './schemes/upto';
import { createFacilitatorService } from './service';
import {
  systemClock,
  type AuthorizationKey,
  type Clock,
  type SettlementReceipt,
  type SettlementStatus,
  type SupportedResponse,
  type VerifyResponse,
} from './types';

/** What the facilitator needs from its configuration; the rest of FacilitatorConfig has defaults. */
export type FacilitatorSettings = Pick<FacilitatorConfig, 'network' | 'rpcUrl' | 'relayerPrivateKeys' | 'assets'> &
  Partial<
    Pick<
      FacilitatorConfig,
      | 'authorizerPrivateKey'
      | 'receiptTimeoutMs'
      | 'pollIntervalMs'
      | 'reconcileIntervalMs'
      | 'bodyLimitBytes'
      | 'logLevel'
      | 'apiKeys'
      | 'receiverKeys'
      | 'open'
      | 'settlementMode'
      | 'batchMaxSize'
      | 'batchWaitMs'
      | 'batchEager'
      | 'discoveryRefreshMs'
      | 'discoveryTimeoutMs'
      | 'discoveryAllowPrivate'
      | 'metrics'
    >
  >;

export interface FacilitatorDeps {
  database: DatabaseHandle;
  config: FacilitatorSettings;
  clock?: Clock;
  logger?: Logger;
  /** Chain access; default an HTTP client on `config.rpcUrl`. */
  publicClient?: PublicClient;
  /** Path prefix of the routes when mounted inside another Elysia app, e.g. `/facilitator`. */
  prefix?: string;
  /**
   * The schemes to settle, by wire id (`exact`, `batch-settlement`, `upto`); default all three. A request of a
   * scheme left out is refused `unsupported_scheme`, and `/supported` does not list it.
   */
  schemes?: readonly string[];
  /**
   * Schemes settled besides the built-in ones, after them, each with its own wire id: for schemes
   * made up by tests (test/support/schemes/), which plug in here as the built-in ones do.
   */
  extraSchemes?: readonly FacilitatorScheme[];
  /** How long a gauge's reading (database, chain) serves scrapes of /metrics; default 5000 ms. */
  metricsReadingMaxAgeMs?: number;
  /** Tracks the work done after each answer (its access-log line, its count); tests pass theirs to await it. */
  pending?: PendingWork;
}

/** The schemes this facilitator can settle, by wire id. */
const SCHEMES = [EXACT_SCHEME, BATCH_SETTLEMENT_SCHEME, UPTO_SCHEME] as const;

/** What `reconcile()` and `resumeChannels()` answer when their scheme is left out. */
const NOTHING_RECONCILED: ReconcileReport = {
  checked: 0,
  confirmed: 0,
  reverted: 0,
  dropped: 0,
  stillPending: 0,
  abandoned: 0,
  resumed: 0,
};
const NOTHING_RESUMED: ResumeReport = { checked: 0, confirmed: 0, reverted: 0, resumed: 0, stillPending: 0 };

/** Longest wait for the RPC's chain id in GET /health. */
const HEALTH_RPC_TIMEOUT_MS = 3_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Builds a facilitator on an open database without listening: call `verify`/`settle` in process,
 * or serve `app` (`app.listen`, `app.handle`, or `.use(app)` in another Elysia app). `start()`
 * checks the RPC's chain id, offers `batch-settlement` only when the chain holds its contracts, and
 * starts the schemes' background work (the exact reconciler, the channel resume pass); `stop()`
 * stops it (the database stays open).
 *
 * @example
 * const facilitator = createFacilitator({ database, config: { network: 'eip155:8453', rpcUrl, relayerPrivateKeys: [key], assets: [usdc] } });
 * await facilitator.start();
 * const verdict = await facilitator.verify({ x402Version: 2, paymentPayload, paymentRequirements });
 */
export function createFacilitator({
  database,
  config,
  clock = systemClock,
  logger,
  publicClient,
  prefix = '',
  schemes = SCHEMES,
  extraSchemes = [],
  metricsReadingMaxAgeMs,
  pending,
}: FacilitatorDeps) {
  const log = logger ?? createLogger(config.logLevel ?? FACILITATOR_DEFAULTS.logLevel);
  const chainId = parseCaip2(config.network);
  const pollIntervalMs = config.pollIntervalMs ?? FACILITATOR_DEFAULTS.pollIntervalMs;
  const client = publicClient ?? createRpcClient(config.rpcUrl, pollIntervalMs);
  const relayers = createRelayerPool({ privateKeys: config.relayerPrivateKeys, client, chainId });
  const stopping = new AbortController();
  const tasks = new Set<Promise<unknown>>();
  const background = (task: () => Promise<unknown>) => {
    const running = task().catch((error: unknown) => log.error('background settlement task failed', { error: safeError(error) }));
    tasks.add(running);
    void running.finally(() => tasks.delete(running));
  };
  const unknown = schemes.find((id) => !(SCHEMES as readonly string[]).includes(id));
  if (unknown !== undefined) throw new Error(`Unknown scheme ${JSON.stringify(unknown)}: ${SCHEMES.join(' and ')} are settled here`);
  const settles = (id: string) => schemes.includes(id);
  const receiptTimeoutMs = config.receiptTimeoutMs ?? FACILITATOR_DEFAULTS.receiptTimeoutMs;
  const reconcileIntervalMs = config.reconcileIntervalMs ?? FACILITATOR_DEFAULTS.reconcileIntervalMs;
  // What the schemes that send token transfers from the relayers (exact, upto) each need.
  const transfers = {
    database,
    network: config.network,
    assets: config.assets,
    client,
    relayers,
    clock,
    logger: log,
    receiptTimeoutMs,
    pollIntervalMs,
    reconcileIntervalMs,
    stopping: stopping.signal,
  };
  const exact = settles(EXACT_SCHEME)
    ? createExactScheme({
        ...transfers,
        background,
        settlementMode: config.settlementMode ?? FACILITATOR_DEFAULTS.settlementMode,
        multicall: {
          maxSize: config.batchMaxSize ?? FACILITATOR_DEFAULTS.batchMaxSize,
          maxWaitMs: config.batchWaitMs ?? FACILITATOR_DEFAULTS.batchWaitMs,
          eager: config.batchEager ?? FACILITATOR_DEFAULTS.batchEager,
        },
      })
    : undefined;
  // Payment channels: their transactions go through the same relayer lanes.
  const channel = settles(BATCH_SETTLEMENT_SCHEME)
    ? createChannelScheme({
        db: database.db,
        network: config.network,
        chainId,
        client,
        relayers,
        assets: config.assets,
        authorizerPrivateKey: config.authorizerPrivateKey ?? deriveAuthorizerKey(config.relayerPrivateKeys[0] as `0x${string}`),
        receiverKeys: config.receiverKeys ?? [],
        // Closed unless asked: a facilitator built in process signs claims only with the receiver's key.
        open: config.open ?? false,
        clock,
        logger: log,
        receiptTimeoutMs,
        pollIntervalMs,
        stopping: stopping.signal,
        background,
        resumeIntervalMs: reconcileIntervalMs,
      })
    : undefined;
  // Usage-based charges up to a signed Permit2 maximum, sent from the relayer each authorization names.
  const upto = settles(UPTO_SCHEME) ? createUptoScheme(transfers) : undefined;
  const built: FacilitatorScheme[] = [...[exact, channel, upto].filter((scheme) => scheme !== undefined), ...extraSchemes];
  // A scheme whose contracts the chain lacks (channels on a network without x402BatchSettlement) is not offered.
  const offering = createSchemeOffering(built, log, reconcileIntervalMs);
  // The Bazaar catalogues what the payments it passes declare, listing what each resource's live 402 asks (discovery/).
  const catalogue = createDiscoveryCatalogue(database.db, clock, log, {
    ...REFRESH_DEFAULTS,
    intervalMs: config.discoveryRefreshMs ?? FACILITATOR_DEFAULTS.discoveryRefreshMs,
    timeoutMs: config.discoveryTimeoutMs ?? FACILITATOR_DEFAULTS.discoveryTimeoutMs,
    // Closed unless asked: a facilitator built in process reads only public addresses.
    allowPrivateAddresses: config.discoveryAllowPrivate ?? false,
  });
  const outcomes: Outcomes = new WeakMap();
  const metrics = createFacilitatorMetrics({
    database,
    client,
    relayers,
    network: config.network,
    clock,
    logger: log,
    ...(metricsReadingMaxAgeMs !== undefined ? { readingMaxAgeMs: metricsReadingMaxAgeMs } : {}),
  });
  const service = withSettlementMetrics(withDiscovery(createFacilitatorService(offering), catalogue, outcomes), metrics, {
    schemes: built.map((scheme) => scheme.id),
    network: config.network,
    assets: config.assets,
  });
  const bodyLimit = config.bodyLimitBytes ?? FACILITATOR_DEFAULTS.bodyLimitBytes;
  // Mounted inside another app (a prefix), the host app counts its requests and serves its own /health and /metrics.
  const base = serverBase('facilitator', log, bodyLimit, {
    options: { seed: prefix },
    ...(pending ? { pending } : {}),
    ...(prefix === '' ? { observe: httpMetrics(metrics) } : {}),
  });
  // /health answers 503 when the RPC is unreachable or serves another chain: settlements would fail.
  // The answer names no URL (an RPC URL may carry a provider key).
  const rpcCheck = async () => {
    const actual = await withTimeout(client.getChainId(), HEALTH_RPC_TIMEOUT_MS).catch(() => undefined);
    if (actual === undefined) return 'the RPC did not answer';
    return actual === chainId ? undefined : `the RPC serves chain ${actual}, not ${config.network}`;
  };
  // Not configured, /metrics answers 404: a facilitator built in process shows them only when asked.
  const app = (
    prefix === ''
      ? base.use(metricsRoute(metrics, config.metrics ?? { enabled: false })).use(healthRoutes(database, { rpc: rpcCheck }))
      : base
  )
    .use(extensionResponses(outcomes))
    .use(facilitatorRoutes(service, log, prefix, config.apiKeys ?? [], config.receiverKeys ?? []))
    .use(facilitatorDiscoveryRoutes(catalogue, prefix))
    // The channel state of receivers whose several skill servers share it (keys bound to receivers).
    .use(hostedChannelRoutes(createHostedChannels(database.db, chainId), config.receiverKeys ?? [], prefix));

  return {
    app,
    network: config.network,
    /** This instance's Prometheus registry (what `/metrics` shows, when served). */
    metrics,
    /** Relayer addresses (the `signers` of /supported). */
    relayers: relayers.addresses as readonly Address[],
    verify: (body: unknown): Promise<VerifyResponse> => service.verify(body),
    /** `bearer`: the caller's key, as `Authorization: Bearer` carries it over HTTP (a channel refund our authorizer signs needs the receiver's, and a claim too unless `open`). */
    settle: (body: unknown, mode?: SettlementMode, bearer?: string): Promise<SettleResponse> => service.settle(body, { mode, bearer }),
    supported: (): Promise<SupportedResponse> => service.supported(),
    receipt: (txHash: string): Promise<SettlementReceipt | undefined> => service.receipt(txHash),
    settlement: (key: AuthorizationKey): Promise<SettlementStatus | undefined> => service.settlement(key),
    /** One reconciliation pass of exact settlements now (the timer runs them every `reconcileIntervalMs` after start). */
    reconcile: async (): Promise<ReconcileReport> => (exact ? exact.reconcile() : { ...NOTHING_RECONCILED }),
    /** One pass over upto settlements answered `settlement_pending` (the timer runs them every `reconcileIntervalMs` after start). */
    reconcileUpto: async (): Promise<UptoReconcileReport> => (upto ? upto.reconcile() : { checked: 0, settled: 0, failed: 0 }),
    /** One pass over channel operations not final (the timer runs them every `reconcileIntervalMs` after start). */
    resumeChannels: async (): Promise<ResumeReport> => (channel ? channel.resume() : { ...NOTHING_RESUMED }),
    /** One pass of the Bazaar catalogue's live 402 reads, starting after this call (the timer runs them every `discoveryRefreshMs` after start). */
    refreshCatalogue: (): Promise<RefreshReport> => catalogue.refresh(),
    /**
     * Checks the RPC's chain id (ConfigError on a mismatch), reads the chain for the contracts the
     * schemes need (a scheme missing them is not offered; one the chain could not be read for is
     * read again every `reconcileIntervalMs`), and starts the offered schemes' background work
     * (reconciler, channel resume pass) and the Bazaar catalogue's live 402 reads.
     */
    async start(): Promise<void> {
      await checkRpcChain(client, config.network, log);
      await offering.start();
      catalogue.start();
    },
    /** Stops the schemes' background work and receipt waits (what they did not finish, the next start's passes do), and the catalogue's reads. */
    async stop(): Promise<void> {
      await catalogue.stop();
      offering.stop();
      for (const scheme of built) scheme.drain?.(); // what is queued is sent, not dropped
      stopping.abort();
      await Promise.allSettled([...tasks]);
      for (const scheme of built) await scheme.stop?.();
    },
  };
}

export type Facilitator = ReturnType<typeof createFacilitator>;

/** A viem public client on `rpcUrl` without caching (receipts and nonces must be current). */
export function createRpcClient(rpcUrl: string, pollIntervalMs: number = FACILITATOR_DEFAULTS.pollIntervalMs): PublicClient {
  return createPublicClient({ transport: http(rpcUrl, { timeout: 10_000 }), pollingInterval: pollIntervalMs, cacheTime: 0 });
}

/**
 * Fails with a ConfigError naming FACILITATOR_RPC_URL when the RPC serves another chain than
 * `network`; an RPC that does not answer is only logged (it may come back).
 */
export async function checkRpcChain(client: PublicClient, network: string, logger: Logger): Promise<void> {
  const actual = await client.getChainId().catch((error: unknown) => {
    logger.warn('the RPC did not answer at start; continuing', { error: safeError(error) });
    return undefined;
  });
  if (actual !== undefined && actual !== parseCaip2(network)) {
    throw new ConfigError('FACILITATOR_RPC_URL', `serves chain ${actual}, but the facilitator settles on ${network}`);
  }
}
