import type { AnyElysia } from 'elysia';
import type { RegistryConfig } from '../config';
import type { DatabaseHandle } from '../db';
import { createLogger, type Logger } from '../log';
import { pendingWork, type PendingWork } from '../runtime/pending';
import { systemClock, type Clock, type ServiceContext } from './context';
import { followChanges } from './cache/changes';
import { ReadCache } from './cache/read-cache';
import { readObservedFields } from './modules/skills/view';
import { analyticsRoutes } from './modules/analytics/routes';
import { credentialIdentity } from './modules/auth/identity';
import { authRoutes } from './modules/auth/routes';
import { crossSiteGuard } from './modules/auth/cross-site';
import { discoveryRoutes } from './modules/discovery';
import { groupRoutes } from './modules/groups/routes';
import { reviewRoutes } from './modules/reviews';
import { skillRoutes } from './modules/skills/routes';
import { creatorRoutes } from './modules/creators/routes';
import { walletRoutes } from './modules/wallets/routes';
import { webhookRoutes } from './modules/webhooks/routes';
import { moderationRoutes } from './modules/moderation';
import { docs } from './plugins/docs';
import { healthRoutes, serverBase } from '../http';
import { httpMetrics, metricsRoute } from '../metrics';
import { createRegistryMetrics, type RegistryMetrics } from './metrics';
import { rateLimiter } from './rate-limit/plugin';
import { memoryRateLimitStore, postgresRateLimitStore, type RateLimitStore } from './rate-limit/store';
import { pageRoutes, webRoutes } from '../web';

export { systemClock, type Clock } from './context';

export interface RegistryDeps {
  database: DatabaseHandle;
  config: RegistryConfig;
  clock?: Clock;
  logger?: Logger;
  /** Where rate-limit counters live; by default PostgreSQL (shared) or memory (embedded). */
  rateLimitStore?: RateLimitStore;
  /** Extra routes mounted after the registry's own (e.g. `market dev`'s demo wallet); none by default. */
  plugins?: readonly AnyElysia[];
  /** Tracks work done off the request path (access-log lines, lastUsedAt); tests pass theirs to await it. */
  pending?: PendingWork;
  /** This instance's metrics, shared with its background work (server.ts); its own by default. */
  metrics?: RegistryMetrics;
  /** Called when a new skill is listed (server.ts has the health prober check it at once). */
  listed?: () => void;
}

/**
 * Builds the registry app without listening, so tests make isolated instances and call
 * `app.handle(request)`. `startRegistry` (server.ts) adds the listener and shutdown.
 */
export function createRegistry(deps: RegistryDeps) {
  const { database, config, clock = systemClock, logger = createLogger(config.logLevel) } = deps;
  const pending = deps.pending ?? pendingWork();
  const reads =
    config.readCacheMs > 0
      ? new ReadCache({ maxAgeMs: config.readCacheMs, clock, observe: (ids) => readObservedFields(database.read, ids, config.chain) })
      : undefined;
  if (reads) {
    followChanges(database, reads, logger).catch((error) =>
      logger.warn('cannot follow change notifications; cached reads rely on their age bound alone', { error }),
    );
  }
  const ctx: ServiceContext = {
    db: database.db,
    readDb: database.read,
    reads,
    clock,
    config,
    logger,
    pending,
    ...(deps.listed ? { listed: deps.listed } : {}),
  };
  const metrics = deps.metrics ?? createRegistryMetrics({ database, clock, logger });
  const store = deps.rateLimitStore ?? (database.kind === 'postgres' ? postgresRateLimitStore(database.db) : memoryRateLimitStore());
  // The web pages are routes beside the API (no API path is a page path), with the same headers.
  const app = serverBase('registry', logger, config.bodyLimitBytes, {
    pending,
    security: { publicUrl: config.publicUrl },
    observe: httpMetrics(metrics.registry),
  })
    // Before the rate limiter: a scrape is the operator's (behind a token or its own port), not a client's.
    .use(metricsRoute(metrics.registry, config.metrics))
    .use(crossSiteGuard(config))
    .use(
      rateLimiter({
        rules: config.rateLimits,
        store,
        clock,
        trustedProxies: config.trustedProxies,
        identify: credentialIdentity(ctx),
        onStoreError: (error) => logger.warn('rate limit store failed; request let through', { error }),
      }),
    )
    .use(docs())
    .use(healthRoutes(database))
    .use(authRoutes(ctx))
    .use(creatorRoutes(ctx))
    .use(walletRoutes(ctx))
    .use(groupRoutes(ctx))
    .use(skillRoutes(ctx))
    .use(discoveryRoutes(ctx))
    .use(analyticsRoutes(ctx))
    .use(reviewRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(moderationRoutes(ctx))
    .use(webRoutes(config))
    .use(pageRoutes());
  for (const plugin of deps.plugins ?? []) app.use(plugin);
  return app;
}
