import { createPublicClient, http, type Address, type PublicClient } from 'viem';
import { parseCaip2, type BatchReceipt, type SettleResponse, type SettlementMode } from 'skill-market/x402';
import { ConfigError, deriveAuthorizerKey, FACILITATOR_DEFAULTS, type FacilitatorConfig } from '../config';
import type { DatabaseHandle } from '../db';
import { createLogger, type Logger } from '../log';
import { healthRoutes, serverBase } from '../http';
import { createMulticallBatcher } from './schemes/exact/multicall';
import { createMulticallStore } from './schemes/exact/multicall-store';
import { createDiscoveryCatalogue, extensionResponses, facilitatorDiscoveryRoutes, withDiscovery, type Outcomes } from './discovery';
import { createChainReader } from './schemes/exact/chain';
import { createChannelService, type ResumeReport } from './schemes/channel';
import { createReceiptWatcher } from './receipts';
import { createReconciler, type ReconcileReport } from './schemes/exact/reconciler';
import { createRelayerPool } from './relayer';
import { facilitatorRoutes } from './routes';
import { createFacilitatorService } from './service';
import { createPaymentStore } from './schemes/exact/store';
import {
  systemClock,
  type Clock,
  type PaymentReceipt,
  type SettlementStatus,
  type SupportedResponse,
  type VerifyResponse,
  type AuthorizationKey,
} from './types';
import { safeError } from './chain';

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
      | 'settlementMode'
      | 'batchMaxSize'
      | 'batchWaitMs'
      | 'batchEager'
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
}

/**
 * Builds a facilitator on an open database without listening: call `verify`/`settle` in process,
 * or serve `app` (`app.listen`, `app.handle`, or `.use(app)` in another Elysia app). `start()`
 * checks the RPC's chain id and starts the reconciler; `stop()` stops it (the database stays open).
 *
 * @example
 * const facilitator = createFacilitator({ database, config: { network: 'eip155:8453', rpcUrl, relayerPrivateKeys: [key], assets: [usdc] } });
 * await facilitator.start();
 * const verdict = await facilitator.verify({ x402Version: 2, paymentPayload, paymentRequirements });
 */
/** Longest wait for the RPC's chain id in GET /health. */
const HEALTH_RPC_TIMEOUT_MS = 3_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Batch size for authorizations a stopped process left, when this instance does not batch. */
const RESUMED_MULTICALL_SIZE = 20;

export function createFacilitator({ database, config, clock = systemClock, logger, publicClient, prefix = '' }: FacilitatorDeps) {
  const log = logger ?? createLogger(config.logLevel ?? FACILITATOR_DEFAULTS.logLevel);
  const chainId = parseCaip2(config.network);
  const pollIntervalMs = config.pollIntervalMs ?? FACILITATOR_DEFAULTS.pollIntervalMs;
  const client = publicClient ?? createRpcClient(config.rpcUrl, pollIntervalMs);
  const store = createPaymentStore(database.db, database.kind);
  const chain = createChainReader(client);
  const relayers = createRelayerPool({ privateKeys: config.relayerPrivateKeys, client, chainId });
  const stopping = new AbortController();
  const tasks = new Set<Promise<unknown>>();
  const background = (task: () => Promise<unknown>) => {
    const running = task().catch((error: unknown) => log.error('background settlement task failed', { error: safeError(error) }));
    tasks.add(running);
    void running.finally(() => tasks.delete(running));
  };
  const multicalls = createMulticallStore(database.db);
  const settleContext = {
    store,
    chain,
    client,
    relayers,
    clock,
    logger: log,
    receiptTimeoutMs: config.receiptTimeoutMs ?? FACILITATOR_DEFAULTS.receiptTimeoutMs,
    pollIntervalMs,
    background,
    stopping: stopping.signal,
    receipts: createReceiptWatcher(client, pollIntervalMs, stopping.signal),
  };
  const batchMaxSize = config.batchMaxSize ?? FACILITATOR_DEFAULTS.batchMaxSize;
  // Always there: the reconciler sends what a stopped process claimed but never sent.
  const multicallBatcher = createMulticallBatcher(
    { ...settleContext, multicalls, network: config.network },
    {
      maxSize: batchMaxSize > 1 ? batchMaxSize : RESUMED_MULTICALL_SIZE,
      maxWaitMs: config.batchWaitMs ?? FACILITATOR_DEFAULTS.batchWaitMs,
      eager: config.batchEager ?? FACILITATOR_DEFAULTS.batchEager,
    },
  );
  // Payment channels (`batch-settlement`): their transactions go through the same relayer lanes.
  const channels = createChannelService({
    db: database.db,
    network: config.network,
    chainId,
    client,
    relayers,
    assets: config.assets,
    authorizerPrivateKey: config.authorizerPrivateKey ?? deriveAuthorizerKey(config.relayerPrivateKeys[0] as `0x${string}`),
    receiverKeys: config.receiverKeys ?? [],
    clock,
    logger: log,
    receiptTimeoutMs: settleContext.receiptTimeoutMs,
    pollIntervalMs,
    stopping: stopping.signal,
  });
  // The Bazaar catalogues what the payments it passes declare (discovery/).
  const catalogue = createDiscoveryCatalogue(database.db, clock, log);
  const outcomes: Outcomes = new WeakMap();
  const settling = createFacilitatorService({
    ...settleContext,
    network: config.network,
    assets: config.assets,
    settlementMode: config.settlementMode ?? FACILITATOR_DEFAULTS.settlementMode,
    ...(batchMaxSize > 1 ? { multicallBatcher } : {}),
    multicalls,
    channels,
  });
  const service = withDiscovery(settling, catalogue, outcomes);
  const reconciler = createReconciler({
    store,
    multicalls,
    multicallBatcher,
    client,
    chain,
    relayers,
    clock,
    logger: log,
    intervalMs: config.reconcileIntervalMs ?? FACILITATOR_DEFAULTS.reconcileIntervalMs,
  });
  let channelTimer: ReturnType<typeof setInterval> | undefined;
  const bodyLimit = config.bodyLimitBytes ?? FACILITATOR_DEFAULTS.bodyLimitBytes;
  const base = serverBase('facilitator', log, bodyLimit, { seed: prefix });
  // /health answers 503 when the RPC is unreachable or serves another chain: settlements would fail.
  // The answer names no URL (an RPC URL may carry a provider key).
  const rpcCheck = async () => {
    const actual = await withTimeout(client.getChainId(), HEALTH_RPC_TIMEOUT_MS).catch(() => undefined);
    if (actual === undefined) return 'the RPC did not answer';
    return actual === chainId ? undefined : `the RPC serves chain ${actual}, not ${config.network}`;
  };
  const app = (prefix === '' ? base.use(healthRoutes(database, { rpc: rpcCheck })) : base)
    .use(extensionResponses(outcomes))
    .use(facilitatorRoutes(service, log, prefix, config.apiKeys ?? [], config.receiverKeys ?? []))
    .use(facilitatorDiscoveryRoutes(catalogue, prefix));

  return {
    app,
    network: config.network,
    /** Relayer addresses (the `signers` of /supported). */
    relayers: relayers.addresses as readonly Address[],
    verify: (body: unknown): Promise<VerifyResponse> => service.verify(body),
    /** `bearer`: the caller's key, as `Authorization: Bearer` carries it over HTTP (a channel refund our authorizer signs needs the receiver's). */
    settle: (body: unknown, mode?: SettlementMode, bearer?: string): Promise<SettleResponse> => service.settle(body, mode, bearer),
    supported: (): SupportedResponse => service.supported(),
    receipt: (txHash: string): Promise<PaymentReceipt | BatchReceipt | undefined> => service.receipt(txHash),
    settlement: (key: AuthorizationKey): Promise<SettlementStatus | undefined> => service.settlement(key),
    /** One reconciliation pass now (the timer runs them every `reconcileIntervalMs` after start). */
    reconcile: (): Promise<ReconcileReport> => reconciler.runOnce(),
    /** One pass over channel operations not final (the timer runs them every `reconcileIntervalMs` after start). */
    resumeChannels: (): Promise<ResumeReport> => channels.resume(),
    /** Checks the RPC's chain id (ConfigError on a mismatch) and starts the reconciler and the channel resume pass. */
    async start(): Promise<void> {
      await checkRpcChain(client, config.network, log);
      reconciler.start();
      const resume = () => {
        background(() => channels.resume());
      };
      resume(); // at once: a restart sends what its predecessor recorded but never broadcast
      channelTimer ??= setInterval(resume, config.reconcileIntervalMs ?? FACILITATOR_DEFAULTS.reconcileIntervalMs);
      channelTimer.unref?.();
    },
    /** Stops the reconciler and the background receipt waits (what they did not finish, the next start's reconciler does). */
    async stop(): Promise<void> {
      multicallBatcher.drain(); // queued authorizations are sent, not dropped
      channels.drain();
      if (channelTimer) clearInterval(channelTimer);
      channelTimer = undefined;
      stopping.abort();
      await Promise.allSettled([...tasks]);
      await reconciler.stop();
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
