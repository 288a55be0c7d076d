/**
 * The registry's metrics, one set per registry instance: HTTP requests (counted by the app),
 * health probes, webhook attempts and payment checks (counted by the background workers as they
 * record them), and
 * gauges read from the database when scraped (at most once per `readingMaxAgeMs`): the webhook
 * backlog, endpoints turned off, skill servers by health, and the pool's use.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { DatabaseHandle } from '../db';
import type { Logger } from '../log';
import { cachedReading, databaseMetrics, READING_MAX_AGE_MS, readingCollector } from '../metrics';
import type { Clock } from './context';
import type { VerificationRound } from './modules/payment-verification';
import { serverHealthSummary } from './modules/skill-health';
import { webhookBacklog, type DeliveryVerdict } from './modules/webhooks';

export interface RegistryMetrics {
  readonly registry: Registry;
  /** A webhook attempt's verdict: `delivered`, `retrying` (failed, tried again later) or `failed` (for good). */
  webhookVerdict(verdict: DeliveryVerdict): void;
  /** A skill server probe's outcome: `up`, `down` or `refused` (an address not probed). */
  probeOutcome(outcome: 'up' | 'down' | 'refused'): void;
  /** What a round of checks of reported payments (and of the channels calls were paid over) decided. */
  paymentChecks(round: VerificationRound): void;
}

export interface RegistryMetricsDeps {
  database: DatabaseHandle;
  clock: Clock;
  logger: Logger;
  /** How long a database reading serves scrapes; default READING_MAX_AGE_MS (tests: 0). */
  readingMaxAgeMs?: number;
}

export function createRegistryMetrics({
  database,
  clock,
  logger,
  readingMaxAgeMs = READING_MAX_AGE_MS,
}: RegistryMetricsDeps): RegistryMetrics {
  const registry = new Registry();
  const registers = [registry];
  const collector = readingCollector(registry, logger);
  databaseMetrics(registry, database);

  const verdicts = new Counter({
    name: 'market_webhook_attempts_total',
    help: 'Webhook delivery attempts by verdict: delivered, retrying (failed, tried again later), failed (for good)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const probes = new Counter({
    name: 'market_health_probes_total',
    help: 'Skill server health probes by outcome: up, down, refused (an address the registry does not probe)',
    labelNames: ['outcome'] as const,
    registers,
  });

  const checks = new Counter({
    name: 'market_payment_checks_total',
    help: 'Payments reported for paid calls checked on chain, by outcome: verified (the call counts), rejected, retried (not found yet)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const channelCalls = new Counter({
    name: 'market_channel_call_checks_total',
    help: 'Calls paid over payment channels checked against the chain, by outcome: counted, refused',
    labelNames: ['outcome'] as const,
    registers,
  });

  const backlog = cachedReading(() => webhookBacklog(database.db, clock.now()), readingMaxAgeMs);
  new Gauge({
    name: 'market_webhook_backlog',
    help: 'Webhook deliveries waiting to be sent (due now or waiting for a retry)',
    registers,
    collect: collector('market_webhook_backlog', backlog, (gauge: Gauge, value) => gauge.set(value.pending)),
  });
  new Gauge({
    name: 'market_webhook_backlog_oldest_seconds',
    help: 'Age of the oldest webhook delivery waiting to be sent; 0 when none waits',
    registers,
    collect: collector('market_webhook_backlog_oldest_seconds', backlog, (gauge: Gauge, value) => gauge.set(value.oldestPendingSeconds)),
  });
  new Gauge({
    name: 'market_webhook_endpoints_disabled',
    help: 'Webhook endpoints the registry turned off because their deliveries kept failing',
    registers,
    collect: collector('market_webhook_endpoints_disabled', backlog, (gauge: Gauge, value) => gauge.set(value.disabledEndpoints)),
  });

  const health = cachedReading(() => serverHealthSummary(database.db, clock.now()), readingMaxAgeMs);
  new Gauge({
    name: 'market_skill_servers',
    help: 'Servers of active skills by what their last health probe found: up, down, unknown (not probed yet, or not probed)',
    labelNames: ['status'] as const,
    registers,
    collect: collector('market_skill_servers', health, (gauge: Gauge<'status'>, value) => {
      for (const status of ['up', 'down', 'unknown'] as const) gauge.set({ status }, value[status]);
    }),
  });
  new Gauge({
    name: 'market_skill_server_longest_outage_seconds',
    help: 'How long the skill server down the longest has been down; 0 when none is',
    registers,
    collect: collector('market_skill_server_longest_outage_seconds', health, (gauge: Gauge, value) =>
      gauge.set(value.longestOutageSeconds),
    ),
  });

  return {
    registry,
    webhookVerdict: (verdict) => verdicts.inc({ outcome: verdict }),
    probeOutcome: (outcome) => probes.inc({ outcome }),
    paymentChecks: (round) => {
      for (const outcome of ['verified', 'rejected', 'retried'] as const) checks.inc({ outcome }, round[outcome]);
      for (const outcome of ['counted', 'refused'] as const) channelCalls.inc({ outcome }, round.channels[outcome]);
    },
  };
}
