import { Elysia, t } from 'elysia';
import type { DatabaseHandle } from '../../../db';
import { VERSION } from '../../../version';

const Health = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('unavailable')]),
  version: t.String(),
  database: t.Union([t.Literal('postgres'), t.Literal('embedded')]),
});

/** `GET /health`: 200 when the database answers, 503 when it does not. */
export function healthRoutes(database: DatabaseHandle) {
  return new Elysia({ name: 'health' }).get(
    '/health',
    async ({ set }) => {
      const reachable = await database.ping().then(
        () => true,
        () => false,
      );
      if (!reachable) set.status = 503;
      return { status: reachable ? 'ok' : 'unavailable', version: VERSION, database: database.kind } as const;
    },
    {
      response: { 200: Health, 503: Health },
      detail: { summary: 'Liveness and database reachability', tags: ['System'] },
    },
  );
}
