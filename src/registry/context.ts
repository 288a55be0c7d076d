import type { RegistryConfig } from '../config';
import type { Database } from '../db';
import type { ReadCache } from './cache/read-cache';
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
  /** Where public discovery reads go: a read replica when configured; `db` otherwise. */
  readDb?: Database;
  /** The public read cache, told of this instance's own writes at once (others arrive by NOTIFY). */
  reads?: ReadCache;
  /** Told when a new skill is listed: the health prober checks new servers at once. */
  listed?: () => void;
}
