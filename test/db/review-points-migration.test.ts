/**
 * The move of review scores to the 0–100 scale: reviews written in stars (1–5) before it, and the
 * score sums of their skills, become points (a star is 20), so averages read the same in stars.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { migrations } from '../../drizzle/migrations';
import { migrate, openEmbedded, type DatabaseHandle } from '../../src/db';

const before = migrations.findIndex((m) => m.tag.endsWith('_review_points'));
const USER = '00000000-0000-4000-8000-000000000001';
const SKILL = '00000000-0000-4000-8000-000000000002';

describe('migration to review points', () => {
  let handle: DatabaseHandle;
  const rows = async <T>(query: ReturnType<typeof sql>) => {
    const result = await handle.db.execute(query);
    return (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as T[];
  };

  beforeAll(async () => {
    expect(before).toBeGreaterThan(0);
    handle = await openEmbedded(undefined);
    await migrate(handle.db, migrations.slice(0, before));
    const seed = `
      insert into users (id, wallet_address, created_at, updated_at) values ('${USER}', '0x0000000000000000000000000000000000000001', now(), now());
      insert into skills (id, creator_id, name, slug, price_atomic, network, endpoint, payment_address, created_at, updated_at)
        values ('${SKILL}', '${USER}', 'old', 'old', 1000, 'eip155:8453', 'https://s.example/old', '0x0000000000000000000000000000000000000002', now(), now());
      insert into skill_stats (skill_id, review_count, rating_sum) values ('${SKILL}', 1, 4);
      insert into reviews (skill_id, user_id, consumer_address, score, created_at, updated_at)
        values ('${SKILL}', '${USER}', '0x0000000000000000000000000000000000000001', 4, now(), now())
    `;
    for (const statement of seed.split(';\n')) if (statement.trim()) await handle.db.execute(sql.raw(statement));
    expect(await migrate(handle.db)).toBe(migrations.length - before);
  });
  afterAll(() => handle?.close());

  it('turns 4 stars into 80 points, and the skill’s score sum with it', async () => {
    expect(await rows(sql`select score from reviews`)).toEqual([{ score: 80 }]);
    expect(await rows(sql`select review_count, rating_sum from skill_stats`)).toEqual([{ review_count: 1, rating_sum: 80 }]);
  });
});
