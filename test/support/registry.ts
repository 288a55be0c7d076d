import { loadRegistryConfig, PAYMENT_VERIFICATION_DEFAULTS, type PaymentVerificationConfig, type RegistryConfig } from '../../src/config';
import { afterAll, beforeAll } from 'bun:test';
import type { DatabaseHandle, DatabaseKind } from '../../src/db';
import { authTestConfig, providerKeys } from './auth';
import { openTestDatabase } from './database';
import { createLogger, type Logger } from '../../src/log';
import { createRegistry, createRegistryMetrics, type RegistryDeps, systemClock, type Clock } from '../../src/registry';
import { createPaymentVerifier, type PaymentVerifier } from '../../src/registry/modules/payment-verification';
import { pendingWork } from '../../src/runtime/pending';
import type { LocalChain } from './chain';

/** Log lines written by an app under test, parsed. */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: createLogger('debug', (line) => lines.push(JSON.parse(line))), lines };
}

export function testConfig(overrides: Partial<RegistryConfig> = {}): RegistryConfig {
  return loadRegistryConfig(
    {
      NODE_ENV: 'test',
      RATE_LIMIT_AUTH: 'off',
      RATE_LIMIT_WRITE: 'off',
      RATE_LIMIT_READ: 'off',
      MARKET_RPC_URL: 'http://127.0.0.1:9',
      MARKET_RPC_TIMEOUT_MS: '500',
    },
    process.cwd(),
    overrides,
  );
}

/** A clock tests move by hand. */
export function manualClock(start = new Date()): Clock & { advance(seconds: number): void; set(date: Date): void } {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance: (seconds) => {
      now += seconds * 1000;
    },
    set: (date) => {
      now = date.getTime();
    },
  };
}

/** An isolated registry over `database`, answering `request(path, init)` in process. */
export function testRegistry(database: DatabaseHandle, overrides: Partial<RegistryConfig> = {}, clock?: Clock) {
  return registryWith(database, testConfig(overrides), clock);
}

/** Like testRegistry, with a whole configuration. */
export function registryWith(database: DatabaseHandle, config: RegistryConfig, clock?: Clock, extra: Pick<RegistryDeps, 'listed'> = {}) {
  const { logger, lines } = memoryLogger();
  const pending = pendingWork();
  // Readings taken at each scrape, so a test sees its own changes.
  const metrics = createRegistryMetrics({ database, clock: clock ?? systemClock, logger, readingMaxAgeMs: 0 });
  const app = createRegistry({ database, config, logger, pending, metrics, ...extra, ...(clock ? { clock } : {}) });
  const request = (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
  /** Resolves once the work requests started off their path (log lines, lastUsedAt) is done. */
  const settled = () => pending.settled();
  return { app, request, logs: lines, settled, metrics };
}

/**
 * A registry with provider login on, over a fresh database for one test file, with a clock the
 * test moves: `fx.request`, `fx.clock`, `fx.database`, `fx.config` (filled in beforeAll).
 */
export function registryFixture(kind: DatabaseKind, overrides: Partial<RegistryConfig> = {}, extra: Pick<RegistryDeps, 'listed'> = {}) {
  const clock = manualClock(new Date('2026-11-22T12:00:00Z'));
  const fx = { clock } as {
    clock: typeof clock;
    database: DatabaseHandle;
    registry: ReturnType<typeof registryWith>;
    request: (path: string, init?: RequestInit) => Promise<Response>;
    settled: () => Promise<void>;
    config: RegistryConfig;
  };
  beforeAll(async () => {
    fx.database = await openTestDatabase(kind);
    fx.config = authTestConfig((await providerKeys()).publicKeyPem, overrides);
    fx.registry = registryWith(fx.database, fx.config, clock, extra);
    fx.request = fx.registry.request;
    fx.settled = fx.registry.settled;
  });
  afterAll(() => fx.database.close());
  return fx;
}

/**
 * The payment checks of `fx`'s registry against `chain` (its network, token and RPC) on fx's clock;
 * `config` defaults to the defaults with the background loop off (tests run rounds with verifyNow).
 */
export function chainVerifier(
  fx: ReturnType<typeof registryFixture>,
  chain: LocalChain,
  config: PaymentVerificationConfig = { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: false },
): PaymentVerifier {
  return createPaymentVerifier({
    db: fx.database.db,
    config,
    chain: { ...fx.config.chain, network: chain.network, usdcAddress: chain.token.address, rpcUrl: chain.rpcUrl },
    clock: fx.clock,
    logger: memoryLogger().logger,
    onRound: fx.registry.metrics.paymentChecks,
  });
}
