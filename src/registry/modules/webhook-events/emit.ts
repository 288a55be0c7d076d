/**
 * Emitting an event: one delivery row per enabled endpoint of the account that asked for the
 * event's type, written with the database handle of the cause (its transaction, when it has one),
 * so an event exists exactly when what it reports was recorded. Sending is the deliverer's job.
 */
import { randomBytes } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
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
 * channel's claimed/settled. Null when its order does not matter (a review, a key, a test), and
 * for a call paid over a channel: each is its own event, and the many calls of a busy channel
 * must not wait for one another (a `channel.claimed` comes minutes later).
 */
function orderingKey(type: WebhookEvent, data: Record<string, unknown>): string | null {
  if (type === 'skill.down' || type === 'skill.up') return `server:${data.server}`;
  if (type === 'call.paid' && 'channelId' in data) return null;
  if (type === 'call.paid' || type === 'payment.reverted' || type === 'receipt.mismatch')
    return `payment:${data.network}:${data.transaction}`;
  if (type === 'channel.claimed' || type === 'channel.settled') return `channel:${data.network}:${data.channelId}`;
  return null;
}

/** One event to store: its account, what it says and when it happened. */
type EventToEmit<E extends WebhookEvent> = { userId: string; type: E; data: WebhookEventData<E>; at: Date };

/**
 * Stores `type` for every endpoint of `userId` that wants it (and for `only` alone when given);
 * returns how many. `data` is the event's documented payload (WEBHOOK_EVENT_DATA), version added here.
 */
export function emitEvent<E extends WebhookEvent>(db: Writer, event: EventToEmit<E> & { only?: string }): Promise<number> {
  return storeEvents(db, event.type, [event], event.only);
}

/**
 * {@link emitEvent} for many events of one type (a batch of call records): one read of the
 * endpoints that want it, for all their accounts, and one insert of every delivery.
 */
export function emitEvents<E extends WebhookEvent>(db: Writer, type: E, events: readonly EventToEmit<E>[]): Promise<number> {
  return storeEvents(db, type, events);
}

async function storeEvents<E extends WebhookEvent>(db: Writer, type: E, events: readonly EventToEmit<E>[], only?: string): Promise<number> {
  if (events.length === 0) return 0;
  const endpoints = await db
    .select({ id: webhookEndpoints.id, userId: webhookEndpoints.userId })
    .from(webhookEndpoints)
    .where(
      and(
        inArray(webhookEndpoints.userId, [...new Set(events.map((e) => e.userId))]),
        only ? eq(webhookEndpoints.id, only) : eq(webhookEndpoints.enabled, true),
        only ? undefined : sql`${webhookEndpoints.events} @> ${JSON.stringify([type])}::jsonb`,
      ),
    );
  const rows = events.flatMap((event) => {
    const mine = endpoints.filter((e) => e.userId === event.userId);
    if (mine.length === 0) return [];
    const eventId = newEventId();
    const payload = eventBody(type, event.at, event.data);
    const ordering = orderingKey(type, event.data as Record<string, unknown>);
    return mine.map((e) => ({
      endpointId: e.id,
      eventId,
      orderingKey: ordering,
      type,
      payload,
      status: 'pending' as const,
      nextAttemptAt: event.at,
      createdAt: event.at,
      updatedAt: event.at,
    }));
  });
  if (rows.length > 0) await db.insert(webhookDeliveries).values(rows);
  return rows.length;
}
