import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema';

/** The drizzle database, the same type whether PostgreSQL or the embedded database is behind it. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export type DatabaseKind = 'postgres' | 'embedded';

/** An open database with its lifecycle. */
export interface DatabaseHandle {
  db: Database;
  kind: DatabaseKind;
  /** Cheap round trip for health checks; throws when the database does not answer. */
  ping(): Promise<void>;
  /** Closes connections and releases the data directory lock. Safe to call twice. */
  close(): Promise<void>;
}
