import { Elysia, t } from 'elysia';
import type { DatabaseHandle } from '../db';
import { VERSION } from '../version';
import { RETRY_AFTER_SECONDS } from './error-handler';

const Health = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('unavailable')]),
  version: t.String(),
  database: t.Union([t.Literal('postgres'), t.Literal('embedded')]),
  /** The facilitator's chain: reachable and on the expected network, or why not. */
  rpc: t.Optional(
    t.Object({
      status: t.Union([t.Literal('ok'), t.Literal('unavailable')]),
      error: t.Optional(t.String()),
    }),
  ),
});

/** A dependency check beyond the database: undefined when fine, else what is wrong. */
export type HealthCheck = () => Promise<string | undefined>;

/**
 * `GET /health`: 200 when the database answers (and the RPC, when `rpc` is given), 503 with
 * Retry-After when either does not (within the statement deadline, or the check's own).
 */
export function healthRoutes(database: DatabaseHandle, checks: { rpc?: HealthCheck } = {}) {
  return new Elysia({ name: 'health' }).get(
    '/health',
    async ({ set }) => {
      const [reachable, rpcError] = await Promise.all([
        database.ping().then(
          () => true,
          () => false,
        ),
        checks.rpc?.().catch((error: unknown) => String(error).slice(0, 200)),
      ]);
      const rpcOk = !checks.rpc || rpcError === undefined;
      if (!reachable || !rpcOk) {
        set.status = 503;
        set.headers['retry-after'] = String(RETRY_AFTER_SECONDS);
      }
      return {
        status: reachable && rpcOk ? 'ok' : 'unavailable',
        version: VERSION,
        database: database.kind,
        ...(checks.rpc
          ? { rpc: rpcError === undefined ? { status: 'ok' as const } : { status: 'unavailable' as const, error: rpcError } }
          : {}),
      } as const;
    },
    {
      response: { 200: Health, 503: Health },
      detail: { summary: checks.rpc ? 'Liveness, database and RPC reachability' : 'Liveness and database reachability', tags: ['System'] },
    },
  );
}
