/**
 * An x402 reference facilitator (x402Facilitator with whatever schemes it was given) over HTTP on a
 * free loopback port: `POST /verify`, `POST /settle` and `GET /supported`, as @x402/core's
 * HTTPFacilitatorClient calls them. The test fixture (batch-facilitator.ts) and the bench's
 * reference stacks (bench/reference) serve theirs with it.
 *
 * @example
 * const facilitator = serveFacilitator(new x402Facilitator().register(network, new ExactEvmScheme(signer)));
 * new x402ResourceServer(facilitator.client);
 */
import type { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { Hono } from 'hono';

export function serveFacilitator(facilitator: x402Facilitator) {
  const app = new Hono()
    .post('/verify', async (c) => {
      const body = await c.req.json();
      return c.json(await facilitator.verify(body.paymentPayload, body.paymentRequirements));
    })
    .post('/settle', async (c) => {
      const body = await c.req.json();
      return c.json(await facilitator.settle(body.paymentPayload, body.paymentRequirements));
    })
    .get('/supported', (c) => c.json(facilitator.getSupported()));
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  const url = `http://127.0.0.1:${server.port}`;
  return { url, client: new HTTPFacilitatorClient({ url }), stop: () => server.stop(true) };
}
