import type { SQL } from 'drizzle-orm';
import { resultRows } from './rows';
import type { Database } from './types';

const statements = new WeakMap<Database, Map<string, unknown>>();

/**
 * A statement made once per database and reused: building a drizzle query costs more than running
 * a simple one (a profile of paid calls showed query building as the largest cost of the database
 * layer), so the hot statements are prepared, with `sql.placeholder(name)` for their values.
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

/** A raw SQL statement (e.g. data-modifying CTEs, which drizzle's builders cannot express). */
export interface PreparedSql<Row> {
  /** Runs it with `values`, on `on` when given (a transaction of the database it was made for). */
  execute(values: Record<string, unknown>, on?: Database): Promise<Row[]>;
}

interface DrizzleInternals {
  dialect: { sqlToQuery(query: SQL): unknown };
  session: {
    prepareQuery(
      query: unknown,
      fields: undefined,
      name: string,
      arrayMode: boolean,
    ): { execute(values: Record<string, unknown>): Promise<unknown> };
  };
}

/**
 * {@link prepared} for raw SQL: drizzle's `db.execute` builds and sends an unnamed statement every
 * time; this builds it once and runs it as a named prepared statement (on PostgreSQL; PGlite runs
 * it as given). Rows come back as objects keyed by column name, from either driver.
 */
export function preparedSql<Row>(db: Database, name: string, query: () => SQL): PreparedSql<Row> {
  return prepared(db, name, (d) => {
    const internals = d as unknown as DrizzleInternals;
    const statement = internals.session.prepareQuery(internals.dialect.sqlToQuery(query()), undefined, name, false);
    return {
      execute: async (values: Record<string, unknown>, on?: Database) =>
        resultRows<Row>(await (on ? within(statement, on) : statement).execute(values)),
    };
  });
}

/**
 * A statement {@link prepared} on a database, run on `on` instead: a transaction of that database
 * (drizzle binds a prepared statement to its session's client; the rest is reused as it is).
 */
export function within<S extends object>(statement: S, on: Database): S {
  const client = (on as unknown as { session: { client: unknown } }).session.client;
  if ((statement as { client?: unknown }).client === client) return statement;
  return Object.create(statement, { client: { value: client } }) as S;
}
