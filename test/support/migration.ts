/**
 * A data migration's test: an embedded database migrated up to the step before the migration named
 * by the end of its tag, seeded with rows as they were, then migrated to the end; `rows` reads it.
 *
 * @example
 * const db = migratedOver('_review_points', "insert into users …;\ninsert into skills …");
 * it('…', async () => expect(await db.rows(sql`select score from reviews`)).toEqual([{ score: 80 }]));
 */
import { afterAll, beforeAll, expect } from 'bun:test';
import { sql } from 'drizzle-orm';
import { migrations } from '../../drizzle/migrations';
import { migrate, openEmbedded, type DatabaseHandle } from '../../src/db';

export function migratedOver(tagEnd: string, seed: string) {
  let handle: DatabaseHandle;
  const before = migrations.findIndex((m) => m.tag.endsWith(tagEnd));
  beforeAll(async () => {
    expect(before).toBeGreaterThan(0);
    handle = await openEmbedded(undefined);
    await migrate(handle.db, migrations.slice(0, before));
    for (const statement of seed.split(';\n')) if (statement.trim()) await handle.db.execute(sql.raw(statement));
    expect(await migrate(handle.db)).toBe(migrations.length - before);
  });
  afterAll(() => handle?.close());
  return {
    /** The rows of a query, on either driver's result shape. */
    async rows<T>(query: ReturnType<typeof sql>): Promise<T[]> {
      const result = await handle.db.execute(query);
      return (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as T[];
    },
  };
}
