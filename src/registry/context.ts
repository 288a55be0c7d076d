import type { RegistryConfig } from '../config';
import type { Database } from '../db';
import type { Logger } from '../log';
import type { Clock } from '../runtime/clock';
import type { PendingWork } from '../runtime/pending';

export { systemClock, type Clock } from '../runtime/clock';

/** What every service function gets: no Elysia, no Request. */
export interface ServiceContext {
  db: Database;
  clock: Clock;
  config: RegistryConfig;
  logger: Logger;
  /** Writes made off the request path; `settled()` awaits them. */
  pending: PendingWork;
}
