import { sql } from 'drizzle-orm';
import { preparedSql } from './prepared';
import type { Database, DatabaseKind } from './types';

/**
 * Runs `section` while no other section of the same key runs anywhere on this database. `section`
 * gets the database its statements must run on to be inside the lock: the transaction holding it
 * on PostgreSQL (see {@link within}), the database itself when embedded.
 */
export type KeyLock = <T>(key: string, section: (db: Database) => Promise<T>) => Promise<T>;

/** Sections queued per key on each database object: `${space}|${key}` → the last one's end. */
const queues = new WeakMap<Database, Map<string, Promise<void>>>();

/**
 * A lock per key in the key space `space` (a constant naming what is locked), for everything that
 * uses `db`: in this process a queue per key, so a waiting section holds no connection and keys
 * never wait for each other; on PostgreSQL the section also runs in a transaction that first takes
 * the advisory lock (`space`, hashtext(key)), which serialises it with other processes (or pools)
 * on the same database at the cost of one round trip. The embedded database lives in one process:
 * the queue is the whole lock there, and the section runs outside any transaction, so that other
 * keys' statements are not held up while it waits on something else (a chain read).
 */
export function createKeyLock(db: Database, kind: DatabaseKind, space: number): KeyLock {
  let forDb = queues.get(db);
  if (!forDb) {
    forDb = new Map();
    queues.set(db, forDb);
  }
  const queue = forDb;
  const advisory = preparedSql<unknown>(
    db,
    `key_lock_${space}`,
    () => sql`select pg_advisory_xact_lock(${sql.raw(String(space))}, hashtext(${sql.placeholder('key')}))`,
  );
  const locked =
    kind === 'postgres'
      ? <T>(key: string, section: (db: Database) => Promise<T>) =>
          db.transaction(async (tx) => {
            await advisory.execute({ key }, tx);
            return section(tx);
          })
      : <T>(_key: string, section: (db: Database) => Promise<T>) => section(db);

  return async (key, section) => {
    const name = `${space}|${key}`;
    const previous = queue.get(name);
    let release!: () => void;
    const ended = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous ? previous.then(() => ended) : ended;
    queue.set(name, tail);
    try {
      if (previous) await previous;
      return await locked(key, section);
    } finally {
      release();
      if (queue.get(name) === tail) queue.delete(name);
    }
  };
}
