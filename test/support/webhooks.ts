/**
 * Whether a request that reached a test's webhook receiver is a webhook delivery (Standard
 * Webhooks: it carries `webhook-id`). A receiver listens on a port the system handed it, perhaps
 * one another test's server had just closed; a client of that server still running (a skill
 * server's call tracking or payment checks, a channel claimer) may still be retrying against it,
 * and its requests are no deliveries.
 *
 * @example if (!isWebhookDelivery(request)) return new Response('not a webhook', { status: 404 });
 */
export const isWebhookDelivery = (request: Request): boolean => request.headers.has('webhook-id');

/**
 * A webhook receiver on loopback (a port the system hands out): `handle` answers each delivery;
 * any other request gets 404 (see {@link isWebhookDelivery}). No idle timeout: a receiver may
 * keep a delivery waiting as long as it likes.
 *
 * @example const sink = webhookReceiver(() => new Response('ok')); // POST deliveries to sink.url
 */
export function webhookReceiver(handle: (request: Request) => Response | Promise<Response>): { url: string; stop(): void } {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    fetch: (request) => (isWebhookDelivery(request) ? handle(request) : new Response('not a webhook', { status: 404 })),
  });
  return { url: `http://127.0.0.1:${server.port}/hooks`, stop: () => server.stop(true) };
}
