import type { RegistryConfig } from '../config';
import type { Database } from '../db';
import type { Logger } from '../log';

/** A source of the current time, injected so tests control expiry and windows. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** What every service function gets: no Elysia, no Request. */
export interface ServiceContext {
  db: Database;
  clock: Clock;
  config: RegistryConfig;
  logger: Logger;
}
