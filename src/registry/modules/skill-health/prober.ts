import type { HealthConfig } from '../../../config';
import type { Database } from '../../../db';
import type { Logger } from '../../../log';
import { VERSION } from '../../../version';
import type { Clock } from '../../context';
import { backgroundRounds } from '../../../runtime/rounds';
import { resolveWithDns, type Resolve } from '../../../net';
import { probeServer, type ProbeOutcome } from './probe';
import { liveOffers } from './live-offers';
import { activeEndpoints, claimServer, dueServers, recordOutcome } from './store';

/** What one round of probes did. */
interface ProbeRound {
  probed: number;
  up: number;
  down: number;
  refused: number;
}

export interface HealthProber {
  /**
   * Probes every server that is due now and resolves once all outcomes are recorded. A round
   * already running is joined, not doubled. Tests drive probes with this and a manual clock.
   */
  probeNow(): Promise<ProbeRound>;
  /** A round soon after this call, in the background (a new listing's server is checked at once). */
  probeSoon(): void;
  /** Background rounds until `stop()`. */
  start(): void;
  /** Ends background rounds and waits for the running one. */
  stop(): Promise<void>;
}

export interface HealthProberDeps {
  db: Database;
  config: HealthConfig;
  clock: Clock;
  logger: Logger;
  fetch?: typeof fetch;
  resolve?: Resolve;
  /** Most servers looked at per round; the rest wait for the next round. */
  batchSize?: number;
  /** Told each probe's outcome once it is recorded (the metrics count them). */
  onOutcome?: (outcome: ProbeOutcome['type']) => void;
}

/** How often the background loop looks for due servers (each server is probed only when due). */
const TICK_MS = 15_000;

/**
 * Probes skill servers (`GET <server>/health`): at most `concurrency` at once and never two on one
 * host, each server at most once per interval, backing off while it fails. Scheduling lives in the
 * database (`next_probe_at`), so several registry instances share the work without doubling it.
 */
export function createHealthProber(deps: HealthProberDeps): HealthProber {
  const { db, config, clock, logger } = deps;
  const options = {
    fetch: deps.fetch ?? fetch,
    resolve: deps.resolve ?? resolveWithDns,
    timeoutMs: config.timeoutMs,
    allowPrivateAddresses: config.allowPrivateAddresses,
    userAgent: `skill-market-registry/${VERSION} (health probe)`,
  };
  const batchSize = deps.batchSize ?? 500;

  async function probeOne(serverUrl: string, host: string, round: ProbeRound): Promise<void> {
    const now = clock.now();
    const claimed = await claimServer(db, serverUrl, host, now, new Date(now.getTime() + config.intervalSeconds * 1000));
    if (!claimed) return;
    let outcome: ProbeOutcome = await probeServer(serverUrl, options);
    // A server that does not report its offers (another SDK's) is asked each skill's live 402.
    if (outcome.type === 'up' && !outcome.offers) {
      const offers = await liveOffers(await activeEndpoints(db, serverUrl), options, outcome.address);
      if (offers) outcome = { ...outcome, offers };
    }
    await recordOutcome(db, serverUrl, outcome, claimed, clock.now(), config);
    round.probed += 1;
    round[outcome.type] += 1;
    deps.onOutcome?.(outcome.type);
    if (outcome.type !== 'up') logger.debug('skill server probe', { server: serverUrl, outcome: outcome.type, reason: outcome.reason });
  }

  async function round(): Promise<ProbeRound> {
    const result: ProbeRound = { probed: 0, up: 0, down: 0, refused: 0 };
    const byHost = new Map<string, string[]>();
    for (const serverUrl of await dueServers(db, clock.now(), batchSize)) {
      const host = hostOf(serverUrl);
      byHost.set(host, [...(byHost.get(host) ?? []), serverUrl]);
    }
    // Each worker takes a whole host and probes its servers one after another: one probe in
    // flight per host, `concurrency` hosts at once.
    const hosts = [...byHost.entries()];
    const worker = async () => {
      for (let next = hosts.shift(); next; next = hosts.shift()) {
        const [host, servers] = next;
        for (const serverUrl of servers) {
          await probeOne(serverUrl, host, result).catch((error: unknown) =>
            logger.warn('skill server probe failed to record', { server: serverUrl, error }),
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(config.concurrency, hosts.length) }, worker));
    return result;
  }

  const rounds = backgroundRounds(round, () => Math.min(TICK_MS, config.intervalSeconds * 1000), logger, 'skill health');
  let started = false;
  return {
    probeNow: rounds.now,
    probeSoon: () => {
      if (started) void rounds.next().catch((error: unknown) => logger.warn('skill health round failed', { error }));
    },
    start: () => {
      started = true;
      rounds.start();
    },
    stop: () => {
      started = false;
      return rounds.stop();
    },
  };
}

function hostOf(serverUrl: string): string {
  try {
    return new URL(serverUrl).hostname.toLowerCase();
  } catch {
    return serverUrl;
  }
}
