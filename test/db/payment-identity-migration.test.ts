/**
 * The payment identity migration on a database with checks and call records keyed by (skill, transaction): every
 * row stays as it was (verified payments keep counting), and the new keys take over — a report is
 * unique per (skill, transaction, authorization nonce), a counted transfer per (transaction, log
 * index).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { migrations } from '../../drizzle/migrations';
import { migrate, openEmbedded, type DatabaseHandle } from '../../src/db';

const before = migrations.findIndex((m) => m.tag.endsWith('_payment_identity'));
const SKILL = '00000000-0000-4000-8000-000000000002';
const OTHER = '00000000-0000-4000-8000-000000000003';
const HASH = `0x${'ab'.repeat(32)}`;
const NONCE = `0x${'01'.repeat(32)}`;

describe('migration to payments identified by transfer', () => {
  let handle: DatabaseHandle;
  const rows = async <T>(query: ReturnType<typeof sql>) => {
    const result = await handle.db.execute(query);
    return (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as T[];
  };
  const fails = async (query: ReturnType<typeof sql>) => {
    try {
      await handle.db.execute(query);
      return false;
    } catch {
      return true;
    }
  };

  beforeAll(async () => {
    expect(before).toBeGreaterThan(0);
    handle = await openEmbedded(undefined);
    await migrate(handle.db, migrations.slice(0, before));
    const seed = `
      insert into users (id, wallet_address, created_at, updated_at) values ('00000000-0000-4000-8000-000000000001', '0x0000000000000000000000000000000000000001', now(), now());
      insert into skills (id, creator_id, name, slug, price_atomic, network, endpoint, payment_address, created_at, updated_at)
        values ('${SKILL}', '00000000-0000-4000-8000-000000000001', 'old', 'old', 1000, 'eip155:8453', 'https://s.example/old', '0x0000000000000000000000000000000000000002', now(), now()),
               ('${OTHER}', '00000000-0000-4000-8000-000000000001', 'other', 'other', 1000, 'eip155:8453', 'https://s.example/other', '0x0000000000000000000000000000000000000002', now(), now());
      insert into skill_stats (skill_id, call_count, paid_call_count, total_revenue) values ('${SKILL}', 1, 1, 1000), ('${OTHER}', 0, 0, 0);
      insert into payment_verifications (id, skill_id, tx_hash, status, expected_amount, pay_to, network, payer, amount, block_number, next_attempt_at, created_at, decided_at)
        values ('00000000-0000-4000-8000-000000000004', '${SKILL}', '${HASH}', 'verified', 1000, '0x0000000000000000000000000000000000000002', 'eip155:8453', '0x0000000000000000000000000000000000000009', 1000, 7, now(), now(), now());
      insert into skill_calls (skill_id, payment_ref, payment_id, created_at) values ('${SKILL}', '${HASH}', '00000000-0000-4000-8000-000000000004', now()), ('${SKILL}', null, null, now());
    `;
    for (const statement of seed.split(';\n')) if (statement.trim()) await handle.db.execute(sql.raw(statement));
    expect(await migrate(handle.db)).toBe(migrations.length - before);
  });
  afterAll(() => handle?.close());

  it('keeps every check, call record and count as it was', async () => {
    expect(await rows(sql`select tx_hash, status, payer, nonce, log_index from payment_verifications`)).toEqual([
      { tx_hash: HASH, status: 'verified', payer: '0x0000000000000000000000000000000000000009', nonce: null, log_index: null },
    ]);
    expect(await rows(sql`select count(*)::int as n from skill_calls where payment_id is not null and payment_nonce is null`)).toEqual([
      { n: 1 },
    ]);
    expect(await rows(sql`select paid_call_count, total_revenue::text from skill_stats where skill_id = ${SKILL}`)).toEqual([
      { paid_call_count: 1, total_revenue: '1000' },
    ]);
  });

  it('keys reports by skill, transaction and nonce, and counted transfers by transaction and log index', async () => {
    const check = (skill: string, nonce: string | null, logIndex: number | null) =>
      sql.raw(
        `insert into payment_verifications (skill_id, tx_hash, nonce, log_index, expected_amount, pay_to, network, next_attempt_at, created_at)
         values ('${skill}', '${HASH}', ${nonce ? `'${nonce}'` : 'null'}, ${logIndex ?? 'null'}, 1000, '0x0000000000000000000000000000000000000002', 'eip155:8453', now(), now())`,
      );
    // The same bare report again: refused by the key; one naming a payment of the transaction: taken.
    expect(await fails(check(SKILL, null, null))).toBe(true);
    expect(await fails(check(SKILL, NONCE, 3))).toBe(false);
    expect(await fails(check(SKILL, NONCE, null))).toBe(true);
    // Another skill may report the transaction, but not count the transfer already counted.
    expect(await fails(check(OTHER, NONCE, 3))).toBe(true);
    expect(await fails(check(OTHER, NONCE, 4))).toBe(false);
    const calls = (nonce: string | null) =>
      sql.raw(
        `insert into skill_calls (skill_id, payment_ref, payment_nonce, created_at) values ('${SKILL}', '${HASH}', ${nonce ? `'${nonce}'` : 'null'}, now())`,
      );
    expect(await fails(calls(null))).toBe(true);
    expect(await fails(calls(NONCE))).toBe(false);
    expect(await fails(calls(NONCE))).toBe(true);
  });
});
