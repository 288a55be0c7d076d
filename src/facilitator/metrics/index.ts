/**
 * The facilitator's metrics, one set per facilitator instance: HTTP requests, verifications and
 * settlements with their latency, paid calls and amounts charged (settlements.ts), and gauges read
 * when scraped (at most once per `readingMaxAgeMs`): the relayers' gas balances and queued sends,
 * transactions not yet final, hosted channels' claims due, the pool's use.
 */
import { formatEther, type Address, type PublicClient } from 'viem';
import { Gauge, Registry } from 'prom-client';
import type { DatabaseHandle } from '../../db';
import type { Logger } from '../../log';
import { cachedReading, databaseMetrics, READING_MAX_AGE_MS, readingCollector } from '../../metrics';
import type { RelayerPool } from '../relayer';
import type { Clock } from '../types';
import { claimsDue, pendingTransactions } from './readings';

export { withSettlementMetrics } from './settlements';

export interface FacilitatorMetricsDeps {
  database: DatabaseHandle;
  client: PublicClient;
  relayers: RelayerPool;
  network: string;
  clock: Clock;
  logger: Logger;
  /** How long a reading (database, chain) serves scrapes; default READING_MAX_AGE_MS. */
  readingMaxAgeMs?: number;
}

/** The registry with the gauges; the settlement counters are added by withSettlementMetrics. */
export function createFacilitatorMetrics(deps: FacilitatorMetricsDeps): Registry {
  const { database, client, relayers, network, clock, logger, readingMaxAgeMs = READING_MAX_AGE_MS } = deps;
  const registry = new Registry();
  const registers = [registry];
  const collector = readingCollector(registry, logger);
  databaseMetrics(registry, database);

  // The balances of every relayer in one round of RPC calls; a relayer's address is a label (the configured keys, a few).
  const balances = cachedReading(
    () => Promise.all(relayers.addresses.map(async (address: Address) => ({ address, wei: await client.getBalance({ address }) }))),
    readingMaxAgeMs,
  );
  new Gauge({
    name: 'market_relayer_balance_eth',
    help: 'Native balance (ETH) of each relayer, which pays the gas of settlements',
    labelNames: ['relayer', 'network'] as const,
    registers,
    collect: collector('market_relayer_balance_eth', balances, (gauge: Gauge<'relayer' | 'network'>, value) => {
      for (const { address, wei } of value) gauge.set({ relayer: address, network }, Number(formatEther(wei)));
    }),
  });
  new Gauge({
    name: 'market_relayer_queued_transactions',
    help: 'Transactions waiting for (or being signed and sent in) each relayer’s lane',
    labelNames: ['relayer', 'network'] as const,
    registers,
    collect() {
      for (const relayer of relayers.relayers) this.set({ relayer: relayer.address, network }, relayer.queued);
    },
  });

  const pending = cachedReading(() => pendingTransactions(database.db, clock.now()), readingMaxAgeMs);
  new Gauge({
    name: 'market_pending_transactions',
    help: 'Settlement transactions sent (or recorded to send) and not yet final, by scheme',
    labelNames: ['scheme', 'network'] as const,
    registers,
    collect: collector('market_pending_transactions', pending, (gauge: Gauge<'scheme' | 'network'>, value) => {
      for (const [scheme, count] of Object.entries(value.count)) gauge.set({ scheme, network }, count);
    }),
  });
  new Gauge({
    name: 'market_pending_transaction_oldest_seconds',
    help: 'Age of the oldest settlement transaction not yet final, by scheme; 0 when none',
    labelNames: ['scheme', 'network'] as const,
    registers,
    collect: collector('market_pending_transaction_oldest_seconds', pending, (gauge: Gauge<'scheme' | 'network'>, value) => {
      for (const [scheme, seconds] of Object.entries(value.oldestSeconds)) gauge.set({ scheme, network }, seconds);
    }),
  });

  const claims = cachedReading(() => claimsDue(database.db, clock.now()), readingMaxAgeMs);
  new Gauge({
    name: 'market_channel_claims_due',
    help: 'Hosted payment channels charged beyond what was claimed on chain (vouchers their receiver has yet to claim)',
    registers,
    collect: collector('market_channel_claims_due', claims, (gauge: Gauge, value) => gauge.set(value.channels)),
  });
  new Gauge({
    name: 'market_channel_claim_oldest_seconds',
    help: 'Age of the oldest charge of a hosted channel not yet claimed; 0 when none',
    registers,
    collect: collector('market_channel_claim_oldest_seconds', claims, (gauge: Gauge, value) => gauge.set(value.oldestSeconds)),
  });
  return registry;
}
