/**
 * PGlite as drizzle's driver without a copy of PGlite's type parsers per statement. Drizzle passes
 * its own parsers with every query (dates, timestamps and intervals kept as the text PostgreSQL
 * sends, which its columns then read), and PGlite merges them into a new copy of its ~360 parsers
 * each time: about 0.13 ms of a simple select's 0.3. Here the same parsers are set once on the
 * instance, and drizzle's queries reach PGlite without them: the same values, without the copy.
 */
import { types, type PGlite, type Transaction } from '@electric-sql/pglite';

const asText = (value: string) => value;

/** Drizzle's parsers (drizzle-orm/pglite): these types as text, their arrays as the array's text. */
const DRIZZLE_TEXT_TYPES = [
  types.TIMESTAMP,
  types.TIMESTAMPTZ,
  types.INTERVAL,
  types.DATE,
  1231, // numeric[]
  1115, // timestamp[]
  1185, // timestamptz[]
  1187, // interval[]
  1182, // date[]
];

type QueryOptions = Parameters<PGlite['query']>[2];

/** `options` without their parsers (the instance holds the same ones). */
function withoutParsers(options: QueryOptions): QueryOptions {
  if (options?.parsers === undefined) return options;
  const { parsers: _, ...rest } = options;
  return rest;
}

/**
 * The client to give drizzle: `client`, its parsers set once to drizzle's, its queries passed on
 * without theirs. Every call goes through `client` as it is then (a closed one refuses it).
 */
export function drizzleClient(client: PGlite): PGlite {
  for (const oid of DRIZZLE_TEXT_TYPES) client.parsers[oid] = asText;
  const query = ((text: string, params?: unknown[], options?: QueryOptions) =>
    client.query(text, params, withoutParsers(options))) as PGlite['query'];
  const transaction = (<T>(run: (tx: Transaction) => Promise<T>) =>
    client.transaction((tx) =>
      run(
        Object.assign(Object.create(tx) as Transaction, {
          query: (text: string, params?: unknown[], options?: QueryOptions) => tx.query(text, params, withoutParsers(options)),
        }),
      ),
    )) as PGlite['transaction'];
  return new Proxy(client, {
    get(target, key, receiver) {
      if (key === 'query') return query;
      if (key === 'transaction') return transaction;
      return Reflect.get(target, key, receiver);
    },
  });
}
