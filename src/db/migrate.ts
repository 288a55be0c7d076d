import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { migrations as bundled, type MigrationSource } from '../../drizzle/migrations';
import { resultRows as rows } from './rows';
import type { Database } from './types';

/**
 * Applies pending migrations in one transaction, under an advisory lock so that several
 * processes starting at once against one PostgreSQL apply each migration exactly once.
 * Bookkeeping is drizzle's own (`drizzle.__drizzle_migrations`, sha256 of the SQL file,
 * journal `when` as created_at), so `drizzle-kit migrate` and this agree on what is applied.
 */
export async function migrate(db: Database, migrations: MigrationSource[] = bundled): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await tx.execute(sql`create schema if not exists drizzle`);
    await tx.execute(
      sql`create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`,
    );
    const last = await tx.execute(sql`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`);
    const lastApplied = Number(rows<{ created_at: string | number | null }>(last)[0]?.created_at ?? 0);
    let applied = 0;
    for (const m of migrations) {
      if (m.when <= lastApplied) continue;
      for (const statement of m.sql.split('--> statement-breakpoint')) {
        if (statement.trim() !== '') await tx.execute(sql.raw(statement));
      }
      const hash = createHash('sha256').update(m.sql).digest('hex');
      await tx.execute(sql`insert into drizzle.__drizzle_migrations (hash, created_at) values (${hash}, ${m.when})`);
      applied++;
    }
    return applied;
  });
}

/** An arbitrary constant naming "schema migration" among advisory locks. */
const MIGRATION_LOCK_KEY = 7_202_611_220;
