import { loadRegistryConfig, type RegistryConfig } from '../../src/config';
import type { DatabaseHandle } from '../../src/db';
import { createLogger, type Logger } from '../../src/log';
import { createRegistry, type Clock } from '../../src/registry';

/** Log lines written by an app under test, parsed. */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { logger: createLogger('debug', (line) => lines.push(JSON.parse(line))), lines };
}

export function testConfig(overrides: Partial<RegistryConfig> = {}): RegistryConfig {
  return loadRegistryConfig(
    { NODE_ENV: 'test', RATE_LIMIT_AUTH: 'off', RATE_LIMIT_WRITE: 'off', RATE_LIMIT_READ: 'off', MARKET_RPC_URL: 'http://127.0.0.1:9', MARKET_RPC_TIMEOUT_MS: '500' },
    process.cwd(),
    overrides,
  );
}

/** A clock tests move by hand. */
export function manualClock(start = new Date()): Clock & { advance(seconds: number): void; set(date: Date): void } {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance: (seconds) => void (now += seconds * 1000),
    set: (date) => void (now = date.getTime()),
  };
}

/** An isolated registry over `database`, answering `request(path, init)` in process. */
export function testRegistry(database: DatabaseHandle, overrides: Partial<RegistryConfig> = {}, clock?: Clock) {
  return registryWith(database, testConfig(overrides), clock);
}

/** Like testRegistry, with a whole configuration. */
export function registryWith(database: DatabaseHandle, config: RegistryConfig, clock?: Clock) {
  const { logger, lines } = memoryLogger();
  const app = createRegistry({ database, config, logger, ...(clock ? { clock } : {}) });
  const request = (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
  return { app, request, logs: lines };
}
