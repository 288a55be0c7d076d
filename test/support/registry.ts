import { loadRegistryConfig, type RegistryConfig } from '../../src/config';
import type { DatabaseHandle } from '../../src/db';
import { createLogger, type Logger } from '../../src/log';
import { createRegistry } from '../../src/registry';

/** Log lines written by an app under test, parsed. */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: createLogger('debug', (line) => lines.push(JSON.parse(line))), lines };
}

export function testConfig(overrides: Partial<RegistryConfig> = {}): RegistryConfig {
  return loadRegistryConfig({ NODE_ENV: 'test' }, process.cwd(), overrides);
}

/** An isolated registry over `database`, answering `request(path, init)` in process. */
export function testRegistry(database: DatabaseHandle, overrides: Partial<RegistryConfig> = {}) {
  const { logger, lines } = memoryLogger();
  const app = createRegistry({ database, config: testConfig(overrides), logger });
  const request = (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
  return { app, request, logs: lines };
}
