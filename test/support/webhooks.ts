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
