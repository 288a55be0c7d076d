/**
 * Migration 0005 on a database with counts from before payments were verified: reported revenue
 * is dropped, recorded transaction references are queued for an on-chain check, and only calls
 * without a reference stay counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { migrations } from '../../drizzle/migrations';
import { migrate, openEmbedded, type DatabaseHandle } from '../../src/db';

const before = migrations.findIndex((m) => m.tag.endsWith('_verified_payments'));

describe('migration to verified payments', () => {
  let handle: DatabaseHandle;
  const rows = async <T>(query: ReturnType<typeof sql>) => {
    const result = await handle.db.execute(query);
    return (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as T[];
  };

  beforeAll(async () => {
    handle = await openEmbedded(undefined);
    await migrate(handle.db, migrations.slice(0, before));
    const hash = `0x${'AB'.repeat(32)}`;
    const seed = `
      insert into users (id, wallet_address, created_at, updated_at) values ('00000000-0000-4000-8000-000000000001', '0x0000000000000000000000000000000000000001', now(), now());
      insert into skills (id, creator_id, name, slug, price_atomic, network, endpoint, payment_address, created_at, updated_at)
        values ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'old', 'old', 1000, 'eip155:8453', 'https://s.example/old', '0x0000000000000000000000000000000000000002', now(), now());
      insert into skill_stats (skill_id, call_count, total_revenue) values ('00000000-0000-4000-8000-000000000002', 3, 500001000);
      insert into skill_daily (skill_id, day, calls, revenue) values ('00000000-0000-4000-8000-000000000002', (now() at time zone 'UTC')::date, 3, 500001000);
      insert into skill_calls (skill_id, payment_ref, created_at) values ('00000000-0000-4000-8000-000000000002', '${hash}', now()), ('00000000-0000-4000-8000-000000000002', null, now()), ('00000000-0000-4000-8000-000000000002', 'made-up', now());
      insert into usage_records (skill_id, user_id, amount, payment_ref, created_at) values ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 1000, '${hash.toLowerCase()}', now()), ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 500000000, '0xdeadbeef-made-up', now());
    `;
    for (const statement of seed.split(';\n')) if (statement.trim()) await handle.db.execute(sql.raw(statement));
    expect(await migrate(handle.db)).toBe(migrations.length - before);
  });
  afterAll(() => handle?.close());

  it('queues each recorded transaction hash once for a check and links the records to it', async () => {
    const checks = await rows<{ tx_hash: string; status: string; expected_amount: string }>(
      sql`select tx_hash, status, expected_amount::text from payment_verifications`,
    );
    expect(checks).toEqual([{ tx_hash: `0x${'ab'.repeat(32)}`, status: 'pending', expected_amount: '1000' }]);
    const linked = await rows<{ n: number }>(
      sql`select (select count(*) from usage_records where payment_id is not null)::int + (select count(*) from skill_calls where payment_id is not null)::int as n`,
    );
    expect(linked[0]!.n).toBe(2);
  });

  it('drops unverified revenue and keeps only calls without a reference', async () => {
    expect(await rows(sql`select call_count, paid_call_count, total_revenue::text from skill_stats`)).toEqual([
      { call_count: 1, paid_call_count: 0, total_revenue: '0' },
    ]);
    expect(await rows(sql`select calls, revenue::text from skill_daily`)).toEqual([{ calls: 1, revenue: '0' }]);
  });
});
