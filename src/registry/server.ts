import type { RegistryConfig } from '../config';
import { openDatabase, type DatabaseHandle } from '../db';
import type { Logger } from '../log';
import { createRegistry, type RegistryDeps } from './app';
import { listen } from '../http';
import { listenMetrics, type MetricsListener } from '../metrics';
import { createRegistryMetrics } from './metrics';
import { systemClock } from './context';
import { createHealthProber, type HealthProber } from './modules/skill-health';
import { createWebhookDeliverer } from './modules/webhooks';
import { createPaymentVerifier } from './modules/payment-verification';

export interface RunningRegistry {
  url: string;
  database: DatabaseHandle;
  /** Stops accepting requests, lets in-flight ones finish, then closes the database. */
  stop(): Promise<void>;
}

/** Opens the database (migrating it), builds the app and listens on the configured port. */
export async function startRegistry(
  config: RegistryConfig,
  logger: Logger,
  extra: Pick<RegistryDeps, 'plugins'> = {},
): Promise<RunningRegistry> {
  if (config.auth.jwtSecretGenerated) {
    logger.warn('AUTH_JWT_SECRET is not set: using a random secret, so sessions end when the registry restarts');
  }
  const database = await openDatabase(config.database);
  const metrics = createRegistryMetrics({ database, clock: systemClock, logger });
  let app: ReturnType<typeof createRegistry>;
  let prober: HealthProber | undefined;
  let url: string;
  let metricsListener: MetricsListener | undefined;
  try {
    // A new listing's server is checked at once (its listing waits for that with MARKET_LIST_AFTER_FIRST_CHECK).
    app = createRegistry({ database, config, logger, metrics, ...extra, listed: () => prober?.probeSoon() });
    url = listen(app, config.host, config.port);
  } catch (error) {
    await database.close();
    throw error;
  }
  try {
    metricsListener = listenMetrics(metrics.registry, config.metrics, logger);
  } catch (error) {
    await app.stop();
    await database.close();
    throw error;
  }
  logger.info('registry listening', { url, database: database.kind });
  prober = config.health.enabled
    ? createHealthProber({ db: database.db, config: config.health, clock: systemClock, logger, onOutcome: metrics.probeOutcome })
    : undefined;
  prober?.start();
  const verifier = config.payments.enabled
    ? createPaymentVerifier({
        db: database.db,
        config: config.payments,
        chain: config.chain,
        clock: systemClock,
        logger,
        onRound: metrics.paymentChecks,
      })
    : undefined;
  verifier?.start();
  const webhooks = config.webhooksEnabled
    ? createWebhookDeliverer({
        db: database.db,
        clock: systemClock,
        logger,
        allowPrivateAddresses: config.health.allowPrivateAddresses,
        timeoutMs: config.webhookTimeoutMs,
        leaseMarginMs: config.webhookLeaseMarginMs,
        onVerdict: metrics.webhookVerdict,
      })
    : undefined;
  webhooks?.start();
  return {
    url,
    database,
    stop: async () => {
      await prober?.stop();
      await verifier?.stop();
      await webhooks?.stop();
      await app.stop();
      await metricsListener?.stop();
      await database.close();
    },
  };
}
