/**
 * Channel calls counted when reported: the records still earned when the migration runs (counted
 * by nothing before it) join their skills' calls, each on the day it was reported; counted and
 * refused ones (counted at their claim before, or never) are left as they were.
 */
import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { migratedOver } from '../support/migration';

const USER = '00000000-0000-4000-8000-000000000001';
const SKILL = '00000000-0000-4000-8000-000000000002';
const CHANNEL = `0x${'ab'.repeat(32)}`;
const call = (cumulative: number, status: string, at: string) =>
  `insert into channel_calls (skill_id, channel_id, cumulative, amount, status, created_at) values ('${SKILL}', '${CHANNEL}', ${cumulative}, 1000, '${status}', '${at}')`;

describe('migration to channel calls counted when reported', () => {
  const { rows } = migratedOver(
    '_channel_calls_counted_when_reported',
    `
      insert into users (id, wallet_address, created_at, updated_at) values ('${USER}', '0x0000000000000000000000000000000000000001', now(), now());
      insert into skills (id, creator_id, name, slug, price_atomic, network, endpoint, payment_address, created_at, updated_at)
        values ('${SKILL}', '${USER}', 'old', 'old', 1000, 'eip155:8453', 'https://s.example/old', '0x0000000000000000000000000000000000000002', now(), now());
      insert into skill_stats (skill_id, call_count, paid_call_count, total_revenue, last_called_at) values ('${SKILL}', 1, 1, 1000, '2026-11-20T10:00:00Z');
      insert into skill_daily (skill_id, day, views, calls, revenue) values ('${SKILL}', '2026-11-20', 3, 1, 1000);
      insert into payment_channels (channel_id, network, next_attempt_at, created_at) values ('${CHANNEL}', 'eip155:8453', now(), now());
      ${call(1000, 'counted', '2026-11-20T10:00:00Z')};
      ${call(2000, 'earned', '2026-11-20T11:00:00Z')};
      ${call(3000, 'earned', '2026-11-21T09:00:00Z')};
      ${call(3500, 'refused', '2026-11-21T09:30:00Z')}
    `,
  );

  it('adds the earned records to the calls, on their days, and nothing to the money', async () => {
    expect(await rows(sql`select call_count, paid_call_count, total_revenue::text as revenue from skill_stats`)).toEqual([
      { call_count: 3, paid_call_count: 1, revenue: '1000' },
    ]);
    const [last] = await rows<{ last: string }>(
      sql`select to_char(last_called_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as last from skill_stats`,
    );
    expect(last).toEqual({ last: '2026-11-21T09:00' });
    expect(await rows(sql`select day::text as day, views, calls, revenue::text as revenue from skill_daily order by day`)).toEqual([
      { day: '2026-11-20', views: 3, calls: 2, revenue: '1000' },
      { day: '2026-11-21', views: 0, calls: 1, revenue: '0' },
    ]);
  });
});
