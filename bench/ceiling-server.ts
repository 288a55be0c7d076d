// The ceiling for registry reads: bare Elysia + postgres.js, one indexed query per request,
// no auth, no logging, no rate limits, no error mapping, no cache.
import { Elysia } from 'elysia';
import postgres from 'postgres';

const sql = postgres(process.env.DATABASE_URL!, { max: 10 });
new Elysia()
  .get('/health', () => ({ status: 'ok' }))
  .get('/skills/:slug', async ({ params, set }) => {
    const [row] = await sql`select * from skills where slug = ${params.slug}`;
    if (!row) set.status = 404;
    return row ?? { error: 'not found' };
  })
  .get(
    '/search',
    ({ query }) =>
      sql`select * from skills where is_active and search @@ to_tsquery('english', ${`${query.q}:*`}) order by ts_rank(search, to_tsquery('english', ${`${query.q}:*`})) desc, id desc limit 20`,
  )
  // Newest first, a keyset page after the registry's own cursor (base64url JSON [createdAt, id]).
  .get('/page', ({ query }) => {
    if (!query.cursor) return sql`select * from skills where is_active order by created_at desc, id desc limit 20`;
    const [createdAt, id] = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8')) as [string, string];
    return sql`select * from skills where is_active and (created_at, id) < (${createdAt}::timestamptz, ${id}::uuid) order by created_at desc, id desc limit 20`;
  })
  .listen({ port: Number(process.env.PORT), hostname: '127.0.0.1' });
