import { Elysia } from 'elysia';
import { REGISTRY_ROUTES } from 'skill-market/registry';
import type { DatabaseHandle } from '../db';
import { VERSION } from '../version';
import { RETRY_AFTER_SECONDS } from './error-handler';
import { routeHooks } from './route';

const route = REGISTRY_ROUTES.health;

/** A dependency check beyond the database: undefined when fine, else what is wrong. */
export type HealthCheck = () => Promise<string | undefined>;

/**
 * `GET /health`: 200 when the database answers (and the RPC, when `rpc` is given), 503 with
 * Retry-After when either does not (within the statement deadline, or the check's own).
 */
export function healthRoutes(database: DatabaseHandle, checks: { rpc?: HealthCheck } = {}) {
  return new Elysia({ name: 'health' }).route(
    route.method,
    route.path,
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
    routeHooks(route, checks.rpc ? { summary: 'Liveness, database and RPC reachability' } : {}),
  );
}
