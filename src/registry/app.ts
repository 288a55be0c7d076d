import { Elysia } from 'elysia';
import type { RegistryConfig } from '../config';
import type { DatabaseHandle } from '../db';
import { createLogger, type Logger } from '../log';
import { healthRoutes } from './modules/health/routes';
import { docs } from './plugins/docs';
import { errorHandler } from './plugins/error-handler';
import { requestContext } from './plugins/request-context';

/** A source of the current time, injected so tests control expiry and windows. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface RegistryDeps {
  database: DatabaseHandle;
  config: RegistryConfig;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Builds the registry app without listening, so tests make isolated instances and call
 * `app.handle(request)`. `startRegistry` (server.ts) adds the listener and shutdown.
 */
export function createRegistry({ database, config, logger = createLogger(config.logLevel) }: RegistryDeps) {
  return new Elysia({ name: 'registry' })
    .use(requestContext(logger, config.bodyLimitBytes))
    .use(errorHandler(logger))
    .use(docs())
    .use(healthRoutes(database));
}

export type Registry = ReturnType<typeof createRegistry>;
