/**
 * Emitting an event: one delivery row per enabled endpoint of the account that asked for the
 * event's type, written with the database handle of the cause (its transaction, when it has one),
 * so an event exists exactly when what it reports was recorded. Sending is the deliverer's job.
 */
import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { WebhookEvent, WebhookEventData } from 'skill-market/registry';
import type { Database } from '../../../db';
import { webhookDeliveries, webhookEndpoints } from '../../../db/schema';

/** The `webhook-id` of a new event, as Standard Webhooks names them (`msg_…`). */
const newEventId = () => `msg_${randomBytes(16).toString('base64url')}`;

/** The body every delivery carries: `{ type, timestamp, data }` (data versioned by `data.version`). */
function eventBody(type: WebhookEvent, at: Date, data: object) {
  return { type, timestamp: at.toISOString(), data: { version: 1, ...data } };
}

type Writer = Pick<Database, 'select' | 'insert'>;

/**
 * What an event must not overtake: a server's next down/up, a payment's verified/reverted, a
 * channel's claimed/settled. Null
 * when its order does not matter (a review, a key, a test).
 */
function orderingKey(type: WebhookEvent, data: Record<string, unknown>): string | null {
  if (type === 'skill.down' || type === 'skill.up') return `server:${data.server}`;
  if (type === 'call.paid' || type === 'payment.reverted') return `payment:${data.network}:${data.transaction}`;
  if (type === 'channel.claimed' || type === 'channel.settled') return `channel:${data.network}:${data.channelId}`;
  return null;
}

/**
 * Stores `type` for every endpoint of `userId` that wants it (and for `only` alone when given);
 * returns how many. `data` is the event's documented payload (WEBHOOK_EVENT_DATA), version added here.
 */
export async function emitEvent<E extends WebhookEvent>(
  db: Writer,
  event: { userId: string; type: E; data: WebhookEventData<E>; at: Date; only?: string },
): Promise<number> {
  const endpoints = await db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.userId, event.userId),
        event.only ? eq(webhookEndpoints.id, event.only) : eq(webhookEndpoints.enabled, true),
        event.only ? undefined : sql`${webhookEndpoints.events} @> ${JSON.stringify([event.type])}::jsonb`,
      ),
    );
  if (endpoints.length === 0) return 0;
  const eventId = newEventId();
  const payload = eventBody(event.type, event.at, event.data);
  const ordering = orderingKey(event.type, event.data as Record<string, unknown>);
  await db.insert(webhookDeliveries).values(
    endpoints.map((e) => ({
      endpointId: e.id,
      eventId,
      orderingKey: ordering,
      type: event.type,
      payload,
      status: 'pending' as const,
      nextAttemptAt: event.at,
      createdAt: event.at,
      updatedAt: event.at,
    })),
  );
  return endpoints.length;
}
