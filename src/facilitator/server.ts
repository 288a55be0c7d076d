import type { FacilitatorConfig } from '../config';
import { openDatabase, type DatabaseHandle } from '../db';
import type { Logger } from '../log';
import { listen } from '../http';
import { listenMetrics, type MetricsListener } from '../metrics';
import { checkRpcChain, createFacilitator, createRpcClient, type Facilitator } from './create';

export interface RunningFacilitator {
  url: string;
  facilitator: Facilitator;
  database: DatabaseHandle;
  /** Stops accepting requests and the reconciler, then closes the database. */
  stop(): Promise<void>;
}

/** `market facilitator`: opens (and migrates) the database, checks the chain, listens. */
export async function startFacilitator(config: FacilitatorConfig, logger: Logger): Promise<RunningFacilitator> {
  const publicClient = createRpcClient(config.rpcUrl, config.pollIntervalMs);
  await checkRpcChain(publicClient, config.network, logger); // before opening the database: fail fast
  const database = await openDatabase(config.database);
  let facilitator: Facilitator;
  let url: string;
  let metricsListener: MetricsListener | undefined;
  try {
    facilitator = createFacilitator({ database, config, logger, publicClient });
    await facilitator.start();
    url = listen(facilitator.app, config.host, config.port);
  } catch (error) {
    await database.close();
    throw error;
  }
  try {
    metricsListener = listenMetrics(facilitator.metrics, config.metrics, logger);
  } catch (error) {
    await facilitator.app.stop();
    await facilitator.stop();
    await database.close();
    throw error;
  }
  logger.info('facilitator listening', { url, network: config.network, relayers: facilitator.relayers, database: database.kind });
  if (config.open) {
    logger.warn(
      'open facilitator: its receiver authorizer signs the channel claims anyone posts, up to the payer’s voucher; FACILITATOR_OPEN=false (the default with NODE_ENV=production) signs only for receivers presenting their FACILITATOR_RECEIVER_KEYS key',
    );
  }
  return {
    url,
    facilitator,
    database,
    stop: async () => {
      await facilitator.app.stop();
      await metricsListener?.stop();
      await facilitator.stop();
      await database.close();
    },
  };
}
