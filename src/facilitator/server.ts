import type { FacilitatorConfig } from '../config';
import { openDatabase, type DatabaseHandle } from '../db';
import type { Logger } from '../log';
import { LISTENER_OPTIONS } from '../registry/plugins/request-context';
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
  try {
    facilitator = createFacilitator({ database, config, logger, publicClient });
    await facilitator.start();
    facilitator.app.listen({ hostname: config.host, port: config.port, ...LISTENER_OPTIONS });
  } catch (error) {
    await database.close();
    throw error;
  }
  const server = facilitator.app.server;
  if (!server) throw new Error('the facilitator did not start listening');
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${server.port}`;
  logger.info('facilitator listening', { url, network: config.network, relayers: facilitator.relayers, database: database.kind });
  return {
    url,
    facilitator,
    database,
    stop: async () => {
      await facilitator.app.stop();
      await facilitator.stop();
      await database.close();
    },
  };
}
