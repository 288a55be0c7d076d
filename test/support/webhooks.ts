import { expect } from 'bun:test';
import { bearer, jsonPost } from './auth';
import { json } from './catalogue';

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

/** A receiver that takes every delivery and never answers it: `held` counts those still open. */
export function hangingReceiver() {
  const state = { held: 0, received: 0 };
  const receiver = webhookReceiver((request) => {
    state.held++;
    state.received++;
    request.signal.addEventListener('abort', () => state.held--);
    return new Promise<Response>(() => {});
  });
  return { ...receiver, state };
}

/** A receiver that answers at once; records each event and what `heldElsewhere` counted when it arrived. */
export function healthyReceiver(heldElsewhere: () => number = () => 0) {
  const arrivals: { id: string; heldElsewhere: number }[] = [];
  const receiver = webhookReceiver(async (request) => {
    const held = heldElsewhere();
    await request.json();
    arrivals.push({ id: request.headers.get('webhook-id') ?? '', heldElsewhere: held });
    return new Response('ok');
  });
  return { ...receiver, arrivals };
}

type RegistryRequest = (path: string, init?: RequestInit) => Promise<Response>;

/** Adds a `call.paid` endpoint at `url` for the account of `token`: its id. */
export async function addEndpoint(request: RegistryRequest, token: string, url: string): Promise<string> {
  const res = await request('/webhooks', jsonPost({ url, events: ['call.paid'] }, bearer(token)));
  expect(res.status).toBe(201);
  return (await json<{ id: string }>(res)).id;
}

/** Queues a test event for endpoint `id`. */
export async function sendTest(request: RegistryRequest, token: string, id: string): Promise<void> {
  expect((await request(`/webhooks/${id}/test`, jsonPost({}, bearer(token)))).status).toBe(200);
}
