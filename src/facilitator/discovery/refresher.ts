/**
 * Keeps the catalogue's terms what each resource asks now: reads the live 402 of every catalogued
 * HTTP resource (src/net/live-402.ts, guarded against SSRF) when a payment catalogued it, and again
 * every refresh interval, and lists its offers verbatim in the server's order, every scheme
 * included. The paid terms stay listed until the first read succeeds. A resource that stops
 * answering a 402 with offers keeps its last terms (its `lastUpdated` ages) and is dropped once its
 * reads have failed for `dropAfterMs`; a later payment catalogues it again. MCP tools are not read:
 * their terms are the paid ones.
 *
 * Bounded: a pass reads at most `batch` resources, `concurrency` at a time, each within `timeoutMs`.
 */
import { readLive402, resolveWithDns, type Live402Method, type Resolve } from '../../net';
import type { Logger } from '../../log';
import { backgroundRounds } from '../../runtime/rounds';
import { VERSION } from '../../version';
import type { Clock } from '../types';
import type { DueResource, ResourceStore } from './store';

export interface RefreshOptions {
  /** Pause between two passes; a resource's 402 is read again once its last read is this old. */
  intervalMs: number;
  /** Read resources on loopback, private and link-local addresses (development and tests only). */
  allowPrivateAddresses: boolean;
  /** Longest wait for one resource's 402. */
  timeoutMs: number;
  /** Most resources read in one pass. */
  batch: number;
  /** Reads in flight at once. */
  concurrency: number;
  /** A resource whose reads have failed this long is dropped from the catalogue. */
  dropAfterMs: number;
  fetch?: typeof fetch;
  resolve?: Resolve;
}

export const REFRESH_DEFAULTS = {
  intervalMs: 300_000,
  timeoutMs: 5_000,
  batch: 50,
  concurrency: 4,
  dropAfterMs: 86_400_000,
} as const;

/** What one pass did. */
export interface RefreshReport {
  read: number;
  live: number;
  failed: number;
  dropped: number;
}

export interface CatalogueRefresher {
  /** A pass that starts after this call (so it sees what was recorded before); resolves with its report. */
  refresh(): Promise<RefreshReport>;
  /** A pass soon, not awaited: what a payment just catalogued is read. Nothing after `stop()`. */
  nudge(): void;
  /** A pass at once, then one every `intervalMs`. */
  start(): void;
  /** No further passes; waits for the running one. */
  stop(): Promise<void>;
}

const METHODS: readonly Live402Method[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The method the declaration says the resource is called with (`info.input.method`), else POST. */
function methodOf(extensions: Record<string, unknown>): Live402Method {
  const bazaar = extensions.bazaar as { info?: { input?: { method?: unknown } } } | undefined;
  const method = bazaar?.info?.input?.method;
  const upper = typeof method === 'string' ? method.toUpperCase() : '';
  return (METHODS as readonly string[]).includes(upper) ? (upper as Live402Method) : 'POST';
}

export function createCatalogueRefresher(store: ResourceStore, clock: Clock, logger: Logger, options: RefreshOptions): CatalogueRefresher {
  const read = {
    fetch: options.fetch ?? fetch,
    resolve: options.resolve ?? resolveWithDns,
    timeoutMs: options.timeoutMs,
    allowPrivateAddresses: options.allowPrivateAddresses,
    userAgent: `skill-market-facilitator/${VERSION} (bazaar catalogue)`,
  };
  let closed = false;

  const refreshOne = async (due: DueResource, report: RefreshReport) => {
    const live = await readLive402(due.resource, read, { method: methodOf(due.extensions) });
    const now = clock.now();
    if (live.type === 'offers') {
      await store.saveLive(due.key, live.accepts, now);
      report.live += 1;
      return;
    }
    report.failed += 1;
    const dropped = await store.saveFailure(due.key, now, new Date(now.getTime() - options.dropAfterMs));
    if (dropped) report.dropped += 1;
    logger.debug('bazaar: no live 402 offers', { resource: due.resource, reason: live.reason, dropped });
  };

  const pass = async (): Promise<RefreshReport> => {
    const now = clock.now();
    const due = await store.claimDue(now, new Date(now.getTime() - options.intervalMs), options.batch);
    const report: RefreshReport = { read: due.length, live: 0, failed: 0, dropped: 0 };
    const queue = [...due];
    const worker = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await refreshOne(next, report);
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency, queue.length) }, worker));
    return report;
  };

  const rounds = backgroundRounds(pass, () => options.intervalMs, logger, 'bazaar catalogue refresh');
  return {
    refresh: () => rounds.next(),
    nudge() {
      if (closed) return;
      rounds.next().catch((error: unknown) => logger.warn('bazaar catalogue refresh failed', { error }));
    },
    start: () => rounds.start(),
    async stop() {
      closed = true;
      await rounds.stop();
    },
  };
}
