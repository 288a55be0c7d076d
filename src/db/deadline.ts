import type { Sql } from 'postgres';

/**
 * How long one statement, or the wait for a connection to start a transaction, may take before
 * the database counts as unavailable. Our statements take milliseconds; a database that is down,
 * restarting or cut off by the network must give a prompt 503, not a request hanging until TCP
 * gives up (minutes) or connect_timeout fires (10 s by default).
 */
export const DATABASE_DEADLINE_MS = 1_500;

/** The database did not answer in time, refused the connection or dropped it. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
}

/**
 * What a pool's statements are doing, for the metrics: statements sent and not yet answered (at
 * most the pool size run; the rest wait for a connection) and deadlines passed since it opened.
 */
export interface DatabaseStats {
  poolSize: number;
  inFlight: number;
  deadlineHits: number;
}

type Query = Promise<unknown> & { state?: unknown; cancel(): unknown; reject(error: unknown): void };

/**
 * A postgres.js client whose every statement has a deadline: past it, the statement's promise
 * fails with DatabaseUnavailableError. Like any timeout, its effect is then unknown: a statement
 * already sent may still complete, and one waiting on a connection that is being (re)established
 * runs if that connection comes up (one that fails errors its queue, so nothing runs later in an
 * outage). Inside a transaction the failure rolls the transaction back. A transaction that cannot
 * even start in time is abandoned: should the connection free up later, its body is not run.
 *
 * Wraps the three entry points drizzle uses: `unsafe` (every statement), `begin` (transactions,
 * whose client is wrapped too) and `savepoint` (nested transactions).
 */
export function withDeadline<T extends Sql>(sql: T, ms: number = DATABASE_DEADLINE_MS, stats?: DatabaseStats): T {
  const late = () => {
    if (stats) stats.deadlineHits += 1;
    return new DatabaseUnavailableError(`the database did not answer within ${ms} ms`);
  };
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (...args: unknown[]) => {
          const query = (target.unsafe as unknown as (...a: unknown[]) => Query)(...args);
          if (stats) stats.inFlight += 1;
          const timer = setTimeout(() => {
            // Not query.cancel(): withdrawing a statement queued on a connecting connection left
            // postgres.js's pool stuck for good once the database came back.
            query.reject(late());
          }, ms);
          // Promise.prototype.then, not the query's own then: that one would start the query
          // before drizzle has chosen its result format (.values()).
          const done = () => {
            clearTimeout(timer);
            if (stats) stats.inFlight -= 1;
          };
          Promise.prototype.then.call(query, done, done);
          return query;
        };
      }
      if (property === 'begin' || property === 'savepoint') {
        return (...args: unknown[]) => {
          const body = args.pop() as (tx: Sql) => unknown;
          let abandoned = false;
          let started = false;
          const run = (tx: Sql) => {
            started = true;
            if (abandoned) throw late();
            return body(withDeadline(tx, ms, stats));
          };
          const transaction = (Reflect.get(target, property) as (...a: unknown[]) => Promise<unknown>).call(target, ...args, run);
          if (property === 'savepoint') return transaction; // runs on the connection already held
          let timer: ReturnType<typeof setTimeout> | undefined;
          const waited = new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              if (started) return;
              abandoned = true;
              reject(late());
            }, ms);
          });
          return Promise.race([transaction, waited]).finally(() => clearTimeout(timer));
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    apply(target, thisArg, args) {
      return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args);
    },
  });
}
