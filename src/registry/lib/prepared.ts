import type { Database } from '../../db';

const statements = new WeakMap<Database, Map<string, unknown>>();

/**
 * A drizzle prepared statement made once per database and reused: building a query costs more
 * than running a simple one, so the hot reads (skill detail, credential checks) are prepared.
 */
export function prepared<T>(db: Database, name: string, make: (db: Database) => T): T {
  let forDb = statements.get(db);
  if (!forDb) {
    forDb = new Map();
    statements.set(db, forDb);
  }
  let statement = forDb.get(name) as T | undefined;
  if (statement === undefined) {
    statement = make(db);
    forDb.set(name, statement);
  }
  return statement;
}
