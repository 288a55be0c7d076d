import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { migrations } from '../../drizzle/migrations';
import { renderMigrationIndex } from '../../scripts/db-generate';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db';
import { databaseKinds, openTestDatabase, tableNames, TEST_DATABASE_URL } from '../support/database';

const root = join(import.meta.dir, '../..');

describe('migration bundle', () => {
  it('matches drizzle/meta/_journal.json and the SQL files (run npm run db:generate after schema changes)', () => {
    expect(readFileSync(join(root, 'drizzle/migrations.ts'), 'utf8')).toBe(renderMigrationIndex(root));
    for (const m of migrations) expect(m.sql).toBe(readFileSync(join(root, `drizzle/${m.tag}.sql`), 'utf8'));
  });
});

for (const kind of databaseKinds) {
  describe(`migrations on ${kind}`, () => {
    let handle: DatabaseHandle;
    beforeAll(async () => {
      handle = await openTestDatabase(kind);
    });
    afterAll(() => handle.close());

    it('creates the schema tables', async () => {
      expect(await tableNames(handle)).toContain('users');
    });

    it('records each migration once with drizzle-kit compatible hashes', async () => {
      const result = await handle.db.execute(sql`select hash, created_at from drizzle.__drizzle_migrations order by id`);
      const rows = (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as {
        hash: string;
        created_at: string;
      }[];
      const expected = migrations.map((m) => new Bun.CryptoHasher('sha256').update(m.sql).digest('hex'));
      expect(rows.map((r) => r.hash)).toEqual(expected);
      expect(rows.map((r) => Number(r.created_at))).toEqual(migrations.map((m) => m.when));
    });

    it('applies nothing the second time', async () => {
      expect(await migrate(handle.db)).toBe(0);
    });
  });
}

describe.skipIf(!TEST_DATABASE_URL)('migrations on PostgreSQL from several processes at once', () => {
  it('applies each migration exactly once when two openers race', async () => {
    const fresh = await openTestDatabase('postgres');
    try {
      await fresh.db.execute(sql`drop schema public cascade`);
      await fresh.db.execute(sql`create schema public`);
      await fresh.db.execute(sql`drop schema drizzle cascade`);
      const url = (fresh.db as unknown as { $client: { options: { host: string[]; port: number[]; database: string; user: string } } })
        .$client.options;
      const target = `postgres://${url.user}@${url.host[0]}:${url.port[0]}/${url.database}`;
      const [a, b] = await Promise.all([
        openDatabase({ kind: 'postgres', url: target, poolSize: 2 }),
        openDatabase({ kind: 'postgres', url: target, poolSize: 2 }),
      ]);
      await Promise.all([a.close(), b.close()]);
      const count = await fresh.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
      expect((count as unknown as { n: number }[])[0]?.n).toBe(migrations.length);
      expect(await tableNames(fresh)).toContain('users');
    } finally {
      await fresh.close();
    }
  });
});
