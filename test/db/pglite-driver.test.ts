/**
 * The embedded database's driver for drizzle: PGlite's parsers set once to drizzle's (dates,
 * timestamps, intervals and their arrays, numeric arrays as PostgreSQL's text), and drizzle's
 * queries passed on without their own parsers, so PGlite copies none per statement. The values
 * are those drizzle reads through PGlite's own path; transactions commit and roll back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { PGlite } from '@electric-sql/pglite';
import { eq, sql } from 'drizzle-orm';
import { embeddedHandle, openPGlite, type DatabaseHandle } from '../../src/db';
import { resultRows } from '../../src/db/rows';
import { users } from '../../src/db/schema';
import { migratedDump } from '../support/database';

/** Every type drizzle's PGlite session reads as text, and a few it leaves to PGlite. */
const VALUES = sql`select
  timestamp '2026-02-03 04:05:06.789' as ts,
  timestamptz '2026-02-03 04:05:06.789+00' as tstz,
  interval '1 day 02:03:04' as iv,
  date '2026-02-03' as d,
  array[1.5, 2.25]::numeric[] as nums,
  array[timestamp '2026-02-03 04:05:06']::timestamp[] as tss,
  array[timestamptz '2026-02-03 04:05:06+00']::timestamptz[] as tstzs,
  array[interval '1 hour']::interval[] as ivs,
  array[date '2026-02-03']::date[] as ds,
  42::int4 as n, 9007199254740993::int8 as big, '{"a":1}'::jsonb as j, true as b, array[1, 2]::int4[] as ints`;

const WALLET = '0x00000000000000000000000000000000000000aa';

let client: PGlite;
let handle: DatabaseHandle;
/** The options of every query that reached PGlite through the handle. */
const seen: unknown[] = [];

beforeAll(async () => {
  ({ client } = await openPGlite(undefined, { loadDataDir: await migratedDump() }));
  const watched = new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (key === 'query') {
        return (text: string, params?: unknown[], options?: unknown) => {
          seen.push(options);
          return target.query(text, params, options as never);
        };
      }
      if (key === 'transaction') {
        return (run: (tx: unknown) => Promise<unknown>) =>
          target.transaction((tx) =>
            run({
              ...tx,
              query: (text: string, params?: unknown[], options?: unknown) => {
                seen.push(options);
                return tx.query(text, params, options as never);
              },
            }),
          );
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  handle = embeddedHandle(watched, () => client.close());
}, 60_000);

afterAll(() => handle?.close());

describe('the embedded database through drizzle', () => {
  it('reads every value as drizzle reads it through PGlite’s own parsers, and passes no parsers per query', async () => {
    seen.length = 0;
    const through = resultRows<Record<string, unknown>>(await handle.db.execute(VALUES));
    // The reference: the same statement on a PGlite of its own, with drizzle's per-query parsers.
    const { client: reference } = await openPGlite(undefined, { loadDataDir: await migratedDump() });
    try {
      const { drizzle } = await import('drizzle-orm/pglite');
      const direct = resultRows<Record<string, unknown>>(await drizzle(reference).execute(VALUES));
      expect(through).toEqual(direct);
    } finally {
      await reference.close();
    }
    expect(through[0]).toMatchObject({
      ts: '2026-02-03 04:05:06.789',
      tstz: '2026-02-03 04:05:06.789+00',
      iv: '1 day 02:03:04',
      d: '2026-02-03',
      nums: '{1.5,2.25}',
      ds: '{2026-02-03}',
      n: 42,
      j: { a: 1 },
      b: true,
      ints: [1, 2],
    });
    expect(seen.length).toBeGreaterThan(0);
    for (const options of seen) expect(options).not.toHaveProperty('parsers');
  });

  it('maps table rows (timestamps to dates) in and out of a transaction, and rolls one back', async () => {
    seen.length = 0;
    await handle.db.transaction(async (tx) => {
      await tx.insert(users).values({ walletAddress: WALLET });
      const [inside] = await tx.select().from(users).where(eq(users.walletAddress, WALLET));
      expect(inside?.createdAt).toBeInstanceOf(Date);
    });
    const [row] = await handle.db.select().from(users).where(eq(users.walletAddress, WALLET));
    expect(row?.createdAt).toBeInstanceOf(Date);
    expect(Math.abs(row!.createdAt.getTime() - Date.now())).toBeLessThan(60_000);

    await expect(
      handle.db.transaction(async (tx) => {
        await tx.update(users).set({ name: 'kept?' }).where(eq(users.walletAddress, WALLET));
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    const [after] = await handle.db.select().from(users).where(eq(users.walletAddress, WALLET));
    expect(after?.name).toBeNull();
    expect(seen.length).toBeGreaterThanOrEqual(5);
    for (const options of seen) expect(options).not.toHaveProperty('parsers');
  });
});
