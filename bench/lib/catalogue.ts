/** A catalogue of skills (10,000 by default) by 100 creators, written straight into a fresh PostgreSQL database. */
import postgres from 'postgres';
import { openDatabase } from '../../src/db';

export const SKILLS = 10_000;
export const WORDS = [
  'weather',
  'forecast',
  'translate',
  'summarize',
  'image',
  'resize',
  'search',
  'news',
  'stock',
  'price',
  'crypto',
  'email',
  'parse',
  'pdf',
  'ocr',
  'speech',
  'voice',
  'code',
  'review',
  'maps',
];

/**
 * Skill g is named skill-g; its description is two of WORDS and "helper number g", so each word
 * is in about a tenth of the catalogue (a common word) and each number in one skill (a rare one).
 */
export async function seed(url: string, skills = SKILLS): Promise<void> {
  const handle = await openDatabase({ kind: 'postgres', url, poolSize: 2 });
  await handle.close();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql.unsafe(`
    insert into users (wallet_address, created_at, updated_at)
      select '0x' || lpad(to_hex(g), 40, '0'), now(), now() from generate_series(1, 100) g;
    insert into skill_groups (creator_id, slug, name, created_at, updated_at)
      select id, 'group-' || row_number() over (), 'tools', now(), now() from users;
    insert into skills (creator_id, name, slug, description, price_atomic, network, endpoint, payment_address, created_at, updated_at)
      select u.id, 'skill-' || g, 'skill-' || g,
             (array[${WORDS.map((w) => `'${w}'`).join(',')}])[1 + g % 20] || ' ' || (array[${WORDS.map((w) => `'${w}'`).join(',')}])[1 + (g / 20) % 20] || ' helper number ' || g,
             1000 + g % 5000, 'eip155:8453', 'https://skills.example.com/skill-' || g, '0x000000000000000000000000000000000000dEaD',
             now() - (g || ' seconds')::interval, now()
      from generate_series(1, ${skills}) g
      join (select id, row_number() over () as n from users) u on u.n = 1 + g % 100;
    insert into skill_stats (skill_id) select id from skills;
    insert into skill_group_members (skill_id, group_id) select s.id, g.id from skills s join skill_groups g on g.creator_id = s.creator_id;
  `);
  // As autovacuum would soon: merges the full-text index's pending list (until then every search
  // scans it) and gathers statistics.
  await sql.unsafe('vacuum analyze');
  await sql.end();
}
