/**
 * Facilitator test fixtures: a facilitator over a fresh test database and a local chain, x402
 * request bodies signed by the chain's accounts, a log capture and a hand-moved clock.
 */
import type { Address, Hex, LocalAccount } from 'viem';
import type { PaymentRequirements } from 'skill-market/x402';
import type { DatabaseHandle, DatabaseKind } from '../../src/db';
import { createFacilitator, type Clock, type Facilitator, type FacilitatorSettings } from '../../src/facilitator';
import { OPEN_METRICS } from '../../src/config';
import { createLogger, type Logger } from '../../src/log';
import { pendingWork } from '../../src/runtime/pending';
import { type Authorization, type LocalChain, type TestAccount, signAuthorization } from './chain';
import { openTestDatabase, secondPool } from './database';

export const PRICE = 10_000n; // $0.01

/** Log lines written under test, raw and parsed. */
export function memoryLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger('debug', (line) => lines.push(line)), lines };
}

/** A clock tests move by hand. */
export function manualClock(start = new Date()): Clock & { advance(seconds: number): void } {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance: (seconds) => {
      now += seconds * 1000;
    },
  };
}

/** Exact-EVM requirements for the chain's token, paying `payTo` the price. */
export function requirementsFor(chain: LocalChain, payTo: Address, overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: chain.network,
    amount: PRICE.toString(),
    asset: chain.token.address,
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: chain.token.name, version: chain.token.version },
    ...overrides,
  };
}

/** The wire form of an authorization: every number as a decimal string. */
export function wireAuthorization(a: Authorization) {
  return { ...a, value: `${a.value}`, validAfter: `${a.validAfter}`, validBefore: `${a.validBefore}` };
}

/**
 * A v2 facilitator request body: `signer` signs an authorization paying `requirements` (value,
 * recipient and window overridable, e.g. to make a bad payment), with `accepted` = requirements.
 */
export async function paymentBody(
  chain: LocalChain,
  signer: LocalAccount,
  requirements: PaymentRequirements,
  overrides: Partial<Authorization> = {},
) {
  const signed = await signAuthorization(chain, signer, { to: requirements.payTo, value: BigInt(requirements.amount), ...overrides });
  return v2Body(requirements, wireAuthorization(signed.authorization), signed.signature);
}

export function v2Body(requirements: PaymentRequirements, authorization: ReturnType<typeof wireAuthorization>, signature: Hex) {
  return {
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted: requirements, payload: { signature, authorization } },
    paymentRequirements: requirements,
  };
}

export interface FacilitatorFixture {
  facilitator: Facilitator;
  database: DatabaseHandle;
  logs: string[];
  /** `app.handle` of a JSON request to `path` (with `headers`, e.g. `authorization`). */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  get(path: string): Promise<Response>;
  /** Resolves once the work after each answer so far (access-log line, request count) is done. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A facilitator over a fresh `kind` database, settling on `chain` with the given relayers. Open, as
 * `market dev`'s (its receiver authorizer signs claims for any caller): tests of the receivers'
 * consent pass `config: { open: false }`, `market facilitator`'s default in production.
 */
export async function startFacilitatorFixture(
  chain: LocalChain,
  kind: DatabaseKind,
  options: {
    relayers?: readonly TestAccount[];
    config?: Partial<FacilitatorSettings>;
    clock?: Clock;
    database?: DatabaseHandle;
    /** Start it (its reconciler runs a pass at once); default true. */
    start?: boolean;
    /** The chain client it reads and simulates with; default the chain's. */
    publicClient?: LocalChain['publicClient'];
    /** The schemes it settles, by wire id; default all. */
    schemes?: readonly string[];
  } = {},
): Promise<FacilitatorFixture> {
  const database = options.database ?? (await openTestDatabase(kind));
  const { logger, lines } = memoryLogger();
  const pending = pendingWork();
  const facilitator = createFacilitator({
    database,
    logger,
    pending,
    publicClient: options.publicClient ?? chain.publicClient,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.schemes ? { schemes: options.schemes } : {}),
    config: {
      network: chain.network,
      rpcUrl: chain.rpcUrl,
      relayerPrivateKeys: (options.relayers ?? [chain.accounts.relayer]).map((r) => r.privateKey),
      assets: [chain.token.address],
      receiptTimeoutMs: 5_000,
      pollIntervalMs: 20,
      reconcileIntervalMs: 60_000,
      open: true,
      // The skill servers under test listen on loopback: the Bazaar reads their live 402s.
      discoveryAllowPrivate: true,
      // Served to anyone, as `market dev`'s; readings taken at each scrape, so a test sees its own changes.
      metrics: OPEN_METRICS,
      ...options.config,
    },
    metricsReadingMaxAgeMs: 0,
  });
  if (options.start !== false) await facilitator.start();
  const handle = (path: string, init?: RequestInit) => facilitator.app.handle(new Request(`http://localhost${path}`, init));
  return {
    facilitator,
    database,
    logs: lines,
    post: (path, body, headers = {}) =>
      handle(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
    get: (path) => handle(path),
    settled: () => pending.settled(),
    async close() {
      await facilitator.stop();
      if (!options.database) await database.close();
    },
  };
}

/**
 * Two facilitator instances on one new PostgreSQL database, each with its own connection pool and
 * relayer key (the chain's first two), as two processes would run. Needs TEST_DATABASE_URL.
 */
export async function startTwoInstances(
  chain: LocalChain,
): Promise<{ a: FacilitatorFixture; b: FacilitatorFixture; close(): Promise<void> }> {
  const shared = await openTestDatabase('postgres');
  const other = await secondPool(shared);
  const a = await startFacilitatorFixture(chain, 'postgres', { database: shared, relayers: [chain.accounts.relayers[0]!] });
  const b = await startFacilitatorFixture(chain, 'postgres', { database: other, relayers: [chain.accounts.relayers[1]!] });
  return {
    a,
    b,
    async close() {
      await Promise.all([a.close(), b.close()]);
      await other.close();
      await shared.close();
    },
  };
}
