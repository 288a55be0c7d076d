/**
 * The skill server's Prometheus metrics (`market serve`): the paid calls it answers and what they
 * charged, their outcomes and latency, and its payment channels' claims and settles. Channel calls
 * are paid by vouchers the skill server checks alone, so only it sees each one; the SDK tells an
 * observer (`serve({ observe })`) and these collectors count what it tells. Labels stay few: the
 * server's own skills, the scheme, the network, an outcome and a reason code; never a payer.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ChannelBacklog, ServerObserver } from 'skill-market/creator';
import type { MetricsConfig } from '../config';
import type { Logger } from '../log';
import { cachedReading, LATENCY_BUCKETS, metricsRoute, READING_MAX_AGE_MS, readingCollector } from '../metrics';
import { serverBase } from '../http';

export interface SkillServerMetrics {
  registry: Registry;
  /** What serve() is given as `observe`. */
  observer: ServerObserver;
  /** Where the channel gauges read from once the server runs (`SkillServer.channelBacklog`). */
  readChannels(read: () => Promise<ChannelBacklog | undefined>): void;
}

export function createSkillServerMetrics(logger: Logger, readingMaxAgeMs = READING_MAX_AGE_MS): SkillServerMetrics {
  const registry = new Registry();
  const registers = [registry];
  const calls = new Counter({
    name: 'market_skill_calls_total',
    help: 'Paid calls answered by the skill server, by skill, scheme, network, outcome (paid, refused, failed) and reason code',
    labelNames: ['skill', 'scheme', 'network', 'outcome', 'reason'] as const,
    registers,
  });
  const paid = new Counter({
    name: 'market_skill_paid_calls_total',
    help: 'Calls answered with their result and charged, by skill, scheme and network',
    labelNames: ['skill', 'scheme', 'network'] as const,
    registers,
  });
  const charged = new Counter({
    name: 'market_skill_charged_atomic_total',
    help: 'Amounts charged for paid calls, in the token’s atomic units (USDC: millionths of a dollar), by skill, scheme and network',
    labelNames: ['skill', 'scheme', 'network'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'market_skill_call_duration_seconds',
    help: 'Time from a paid call’s start to its answer (the handler and the payment), by skill, scheme and outcome',
    labelNames: ['skill', 'scheme', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const settlements = new Counter({
    name: 'market_skill_channel_settlements_total',
    help: 'Claims and settles of payment channels sent to the facilitator, by type (claim, settle) and outcome (ok, failed)',
    labelNames: ['type', 'outcome'] as const,
    registers,
  });

  let source: (() => Promise<ChannelBacklog | undefined>) | undefined;
  const backlog = cachedReading(async () => (source ? source() : undefined), readingMaxAgeMs);
  const collector = readingCollector(registry, logger);
  const gauge = ({ name, help }: { name: string; help: string }, value: (b: ChannelBacklog) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect: collector(name, backlog, (g: Gauge, b) => {
        if (b) g.set(value(b));
      }),
    });
  gauge(
    { name: 'market_skill_channel_claims_due', help: 'Payment channels charged beyond what was claimed on chain (vouchers not yet money)' },
    (b) => b.claimsDue,
  );
  gauge(
    { name: 'market_skill_channel_claim_oldest_seconds', help: 'Age of the oldest charge on a channel not yet claimed; 0 when none' },
    (b) => b.oldestClaimSeconds,
  );
  gauge(
    { name: 'market_skill_channel_unclaimed_atomic', help: 'Charged on channels and not yet claimed, in the token’s atomic units' },
    (b) => Number(b.unclaimed),
  );
  gauge({ name: 'market_skill_channel_claiming', help: 'Whether a claim round is under way (1) or not (0)' }, (b) => (b.claiming ? 1 : 0));
  gauge(
    { name: 'market_skill_channel_unsettled_seconds', help: 'How long claimed money has waited for a settle; 0 when none waits' },
    (b) => b.unsettledSeconds,
  );

  return {
    registry,
    observer: {
      call(call) {
        const where = { skill: call.skill, scheme: call.scheme, network: call.network };
        calls.inc({ ...where, outcome: call.outcome, reason: call.reason });
        duration.observe({ skill: call.skill, scheme: call.scheme, outcome: call.outcome }, call.seconds);
        if (call.outcome !== 'paid') return;
        paid.inc(where);
        charged.inc(where, Number(call.amount));
      },
      settlement: (settlement) => settlements.inc(settlement),
    },
    readChannels(read) {
      source = read;
    },
  };
}

/** `GET /metrics` on the skill server's own port, as serve()'s `routes` takes it; none when they are not served there. */
export function skillServerMetricsRoutes(
  metrics: SkillServerMetrics,
  config: MetricsConfig,
  logger: Logger,
): Record<string, (request: Request) => Promise<Response>> {
  if (!config.enabled || config.listener) return {};
  const app = serverBase('metrics', logger, 1024).use(metricsRoute(metrics.registry, config));
  return { '/metrics': (request: Request) => app.handle(request) };
}
