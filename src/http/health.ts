import { Elysia, t } from 'elysia';
import type { DatabaseHandle } from '../db';
import { VERSION } from '../version';
import { RETRY_AFTER_SECONDS } from './error-handler';

const Health = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('unavailable')]),
  version: t.String(),
  database: t.Union([t.Literal('postgres'), t.Literal('embedded')]),
});

/** `GET /health`: 200 when the database answers, 503 with Retry-After when it does not (within the statement deadline). */
export function healthRoutes(database: DatabaseHandle) {
  return new Elysia({ name: 'health' }).get(
    '/health',
    async ({ set }) => {
      const reachable = await database.ping().then(
        () => true,
        () => false,
      );
      if (!reachable) {
        set.status = 503;
        set.headers['retry-after'] = String(RETRY_AFTER_SECONDS);
      }
      return { status: reachable ? 'ok' : 'unavailable', version: VERSION, database: database.kind } as const;
    },
    {
      response: { 200: Health, 503: Health },
      detail: { summary: 'Liveness and database reachability', tags: ['System'] },
    },
  );
}
