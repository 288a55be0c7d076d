import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { DatabaseStats } from './deadline';
import type * as schema from './schema';

/** The drizzle database, the same type whether PostgreSQL or the embedded database is behind it. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export type DatabaseKind = 'postgres' | 'embedded';

/** An open database with its lifecycle. */
export interface DatabaseHandle {
  db: Database;
  /**
   * Where discovery reads may go: a read replica's pool when DATABASE_READ_URL is set, else `db`.
   * A replica lags its primary, so a request that must see its own writes reads `db`.
   */
  read: Database;
  kind: DatabaseKind;
  /** A PostgreSQL pool's statements in flight and deadlines passed (its primary's and replica's together); none for the embedded database. */
  stats?: DatabaseStats;
  /**
   * Follows NOTIFY on `channel`: `onNotify` gets each payload, `onListen` runs each time listening
   * (re)starts (notifications sent while it was down are lost, so a cache starts over then).
   * Resolves to a function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onListen?: () => void): Promise<() => Promise<void>>;
  /** Cheap round trip for health checks; throws when the database does not answer. */
  ping(): Promise<void>;
  /** Closes connections and releases the data directory lock. Safe to call twice. */
  close(): Promise<void>;
}
