/**
 * The registry on a real port for page tests, built by the same `createRegistry` the binary runs
 * (so the pages and their bundle are the ones it serves), over a fresh database: PostgreSQL when
 * TEST_DATABASE_URL is set, else embedded.
 */
import { loadRegistryConfig, type RegistryConfig } from '../../../src/config';
import type { DatabaseHandle } from '../../../src/db';
import { createRegistry, systemClock } from '../../../src/registry';
import { createPaymentVerifier } from '../../../src/registry/modules/payment-verification';
import { openTestDatabase, TEST_DATABASE_URL } from '../database';
import { freePort } from '../process';
import { memoryLogger } from '../registry';

export interface WebRegistry {
  url: string;
  database: DatabaseHandle;
  config: RegistryConfig;
  request(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export interface WebRegistryOptions {
  /** Extra environment, e.g. MARKET_NETWORK / MARKET_USDC_ADDRESS / MARKET_RPC_URL of a local chain. */
  env?: Record<string, string>;
  overrides?: Partial<RegistryConfig>;
  /** Check reported payments on the chain in the background, as `market registry` does (revenue counts only then). */
  verifyPayments?: boolean;
}

export async function startWebRegistry(options: WebRegistryOptions = {}): Promise<WebRegistry> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const database = await openTestDatabase(TEST_DATABASE_URL ? 'postgres' : 'embedded');
  const config = loadRegistryConfig(
    {
      NODE_ENV: 'test',
      PUBLIC_URL: url,
      AUTH_JWT_SECRET: 'web-test-secret-that-is-at-least-32-chars',
      RATE_LIMIT_AUTH: 'off',
      RATE_LIMIT_WRITE: 'off',
      RATE_LIMIT_READ: 'off',
      MARKET_RPC_URL: 'http://127.0.0.1:9',
      MARKET_RPC_TIMEOUT_MS: '500',
      ...options.env,
    },
    process.cwd(),
    options.overrides,
  );
  // The page is served over plain http on loopback here, where a Secure cookie is not stored.
  config.auth = { ...config.auth, secureCookies: false };
  // Checking payments on chain is the registry's (a payer's channels are read again when stale) as well as the verifier's.
  if (options.verifyPayments) config.payments = { ...config.payments, enabled: true, intervalMs: 50 };
  const logger = memoryLogger().logger;
  const app = createRegistry({ database, config, logger });
  app.listen({ hostname: '127.0.0.1', port });
  const verifier = options.verifyPayments
    ? createPaymentVerifier({
        db: database.db,
        config: config.payments,
        chain: config.chain,
        clock: systemClock,
        logger,
      })
    : undefined;
  verifier?.start();
  return {
    url,
    database,
    config,
    request: (path, init) => fetch(`${url}${path}`, init),
    async close() {
      await verifier?.stop();
      await app.stop(true);
      await database.close();
    },
  };
}
