import { parseArgs } from 'node:util';
import { loadRegistryConfig, type RegistryConfig } from '../../config';
import { createLogger } from '../../log';
import { startRegistry } from '../../registry';
import { exitOnSignal } from '../../runtime/shutdown';

/** `market registry [--port N] [--host H]`: flags win over PORT and HOST. */
export async function registryCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { port: { type: 'string' }, host: { type: 'string' } }, strict: true });
  const env = { ...process.env };
  if (values.port !== undefined) env.PORT = values.port;
  if (values.host !== undefined) env.HOST = values.host;
  const config: RegistryConfig = loadRegistryConfig(env);
  const logger = createLogger(config.logLevel);
  const running = await startRegistry(config, logger);
  exitOnSignal(running.stop, logger);
}
