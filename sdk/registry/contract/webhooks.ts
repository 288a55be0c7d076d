/** Webhook endpoints (a signed-in session manages them, like API keys) and their delivery log. */
import { type Static, Type as T } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from './common';

/**
 * The events a webhook endpoint can ask for.
 *
 * @example
 * await registry.createWebhook({ url: 'https://example.com/hooks', events: ['call.paid'] }); // a subset of WEBHOOK_EVENTS
 */
export const WEBHOOK_EVENTS = [
  'call.paid',
  'payment.reverted',
  'receipt.mismatch',
  'channel.claimed',
  'channel.settled',
  'review.created',
  'key.revoked',
  'skill.down',
  'skill.up',
  'skill.hidden',
  'skill.restored',
  'creator.suspended',
  'creator.restored',
  'webhook.test',
] as const;
/** One of {@link WEBHOOK_EVENTS}. */
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
const EventName = T.Union(WEBHOOK_EVENTS.map((e) => T.Literal(e)));
const Events = T.Array(EventName, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true });
const Url = T.String({ minLength: 8, maxLength: 2048, description: 'https URL the events are POSTed to (http on a local marketplace)' });

/** `POST /webhooks` body: where to send which events. Answered 201 with {@link CreatedWebhook}. */
export const CreateWebhook = T.Object({ url: Url, events: Events });
/** The {@link CreateWebhook} schema's type. */
export type CreateWebhook = Static<typeof CreateWebhook>;

/** `PATCH /webhooks/:id` body: any of the URL, the events, and on/off (turning on clears the registry's reason for turning it off). */
export const UpdateWebhook = T.Object({ url: T.Optional(Url), events: T.Optional(Events), enabled: T.Optional(T.Boolean()) });
/** The {@link UpdateWebhook} schema's type. */
export type UpdateWebhook = Static<typeof UpdateWebhook>;

/** A webhook endpoint as its owner sees it (never its secret). */
export const WebhookView = T.Object({
  id: Uuid(),
  url: T.String(),
  events: T.Array(T.String()),
  enabled: T.Boolean(),
  disabledReason: Nullable(T.String(), 'why the registry turned it off: its deliveries kept failing'),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});
/** The {@link WebhookView} schema's type. */
export type WebhookView = Static<typeof WebhookView>;
/** Answer of `GET /webhooks`. */
export const WebhookList = T.Array(WebhookView);

/**
 * Answer of `POST /webhooks` (201): the endpoint plus `secret` (`whsec_…`), shown only now. Every
 * delivery carries `webhook-id`, `webhook-timestamp` and `webhook-signature` (Standard Webhooks):
 * verify them with this secret, e.g. `new Webhook(secret).verify(body, headers)` of the
 * `standardwebhooks` package.
 */
export const CreatedWebhook = T.Composite([
  WebhookView,
  T.Object({ secret: T.String({ description: 'the signing secret, shown only once' }) }),
]);
/** The {@link CreatedWebhook} schema's type. */
export type CreatedWebhook = Static<typeof CreatedWebhook>;

/** One delivery of one event to an endpoint, with its attempts (newest first). */
export const WebhookDeliveryView = T.Object({
  id: Uuid(),
  eventId: T.String({ description: 'the webhook-id every attempt carries' }),
  type: T.String(),
  status: T.Union([T.Literal('pending'), T.Literal('delivered'), T.Literal('failed')]),
  attempts: T.Integer(),
  nextAttemptAt: Nullable(Timestamp(), 'when the next attempt is due (pending only)'),
  createdAt: Timestamp(),
  log: T.Array(
    T.Object({
      at: Timestamp(),
      status: Nullable(T.Integer(), 'the HTTP status, null when no answer came'),
      latencyMs: Nullable(T.Integer()),
      excerpt: Nullable(T.String(), 'the start of the answer, or why none came'),
    }),
  ),
});
/** The {@link WebhookDeliveryView} schema's type. */
export type WebhookDeliveryView = Static<typeof WebhookDeliveryView>;
/** Answer of `GET /webhooks/:id/deliveries`: the latest 50 deliveries, newest first. */
export const WebhookDeliveryList = T.Array(WebhookDeliveryView);
