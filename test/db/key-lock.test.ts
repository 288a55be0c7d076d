/**
 * The lock per key of a database: sections of one key run one at a time, also across two pools
 * on one PostgreSQL (two processes); other keys never wait, even with more sections waiting than
 * the pool has connections (a waiting section holds none); a section's statements run inside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createKeyLock, type DatabaseHandle } from '../../src/db';
import { resultRows } from '../../src/db/rows';
import { databaseKinds, openTestDatabase, secondPool, TEST_DATABASE_URL } from '../support/database';
import { eventually } from '../support/eventually';

const SPACE = 11;

/** A section that records its entry and waits until let go. */
function held() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { entered: false };
  const section = async () => {
    state.entered = true;
    await gate;
  };
  return { state, release, section };
}

for (const kind of databaseKinds) {
  describe(`the lock per key (${kind} database)`, () => {
    let database: DatabaseHandle;
    beforeAll(async () => {
      database = await openTestDatabase(kind);
    });
    afterAll(() => database.close());

    it('runs the sections of one key one at a time, in order, and other keys meanwhile', async () => {
      const lock = createKeyLock(database.db, kind, SPACE);
      const first = held();
      const holding = lock('payer-a', first.section);
      await eventually(async () => first.state.entered, Boolean, 'the first section runs');
      const order: number[] = [];
      // More waiting sections than the pool has connections (5): none of them holds one.
      const waiting = Array.from({ length: 12 }, (_, i) => lock('payer-a', async () => void order.push(i)));
      const other = await lock('payer-b', async (db) => resultRows<{ n: number }>(await db.execute(sql`select 1 as n`)));
      expect(other.map((r) => Number(r.n))).toEqual([1]);
      expect(order).toEqual([]);
      first.release();
      await Promise.all([holding, ...waiting]);
      expect(order).toEqual(Array.from({ length: 12 }, (_, i) => i));
    });

    it('lets the next section run when one throws', async () => {
      const lock = createKeyLock(database.db, kind, SPACE);
      await expect(lock('payer-c', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      expect(await lock('payer-c', async () => 'next')).toBe('next');
    });
  });
}

describe.skipIf(!TEST_DATABASE_URL)('the lock per key across two pools on one PostgreSQL database', () => {
  let shared: DatabaseHandle;
  let other: DatabaseHandle;
  beforeAll(async () => {
    shared = await openTestDatabase('postgres');
    other = await secondPool(shared);
  });
  afterAll(async () => {
    await other?.close();
    await shared?.close();
  });

  it("a section of one key waits for the other pool's section of that key, not for other keys", async () => {
    const here = createKeyLock(shared.db, 'postgres', SPACE);
    const there = createKeyLock(other.db, 'postgres', SPACE);
    const first = held();
    const holding = here('payer-a', first.section);
    await eventually(async () => first.state.entered, Boolean, 'the first section runs');
    const second = { entered: false };
    const waiting = there('payer-a', async () => {
      second.entered = true;
    });
    expect(await there('payer-b', async () => 'other key')).toBe('other key');
    // The other pool's section of the same key is blocked in the database, on the advisory lock.
    await eventually(
      async () =>
        resultRows<{ n: number }>(
          await shared.db.execute(sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`),
        ),
      (rows) => Number(rows[0]?.n) === 1,
      'the second section waits on the advisory lock',
    );
    expect(second.entered).toBe(false);
    first.release();
    await Promise.all([holding, waiting]);
    expect(second.entered).toBe(true);
  });
});
