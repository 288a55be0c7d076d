/** A server's liveness answer (`GET /health` of the registry and of the facilitator). */
import { type Static, Type as T } from '@sinclair/typebox';

/**
 * Answer of `GET /health`, 200 when `status` is `ok`, 503 (with Retry-After) when `unavailable`:
 * the server's `version`, its `database` kind, and on the facilitator its chain's `rpc`.
 */
export const Health = T.Object({
  status: T.Union([T.Literal('ok'), T.Literal('unavailable')]),
  version: T.String(),
  database: T.Union([T.Literal('postgres'), T.Literal('embedded')]),
  /** The facilitator's chain: reachable and on the expected network, or why not. */
  rpc: T.Optional(
    T.Object({
      status: T.Union([T.Literal('ok'), T.Literal('unavailable')]),
      error: T.Optional(T.String()),
    }),
  ),
});
/** The {@link Health} schema's type. */
export type Health = Static<typeof Health>;
