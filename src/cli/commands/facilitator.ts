import { parseArgs } from 'node:util';
import { loadFacilitatorConfig } from '../../config';
import { startFacilitator } from '../../facilitator';
import { createLogger } from '../../log';
import { exitOnSignal } from '../../runtime/shutdown';

/**
 * `market facilitator [--port N] [--host H] [--rpc URL] [--network eip155:ID]`: flags win over
 * PORT, HOST, FACILITATOR_RPC_URL and FACILITATOR_NETWORK; the relayer key comes from
 * FACILITATOR_PRIVATE_KEY only (never a flag, which would show in process listings).
 */
export async function facilitatorCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, host: { type: 'string' }, rpc: { type: 'string' }, network: { type: 'string' } },
    strict: true,
  });
  const env = { ...process.env };
  if (values.port !== undefined) env.PORT = values.port;
  if (values.host !== undefined) env.HOST = values.host;
  if (values.rpc !== undefined) env.FACILITATOR_RPC_URL = values.rpc;
  if (values.network !== undefined) env.FACILITATOR_NETWORK = values.network;
  const config = loadFacilitatorConfig(env);
  const logger = createLogger(config.logLevel);
  const running = await startFacilitator(config, logger);
  exitOnSignal(running.stop, logger);
}
