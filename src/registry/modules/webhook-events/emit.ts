/**
 * Emitting an event: one delivery row per enabled endpoint of the account that asked for the
 * event's type, written with the database handle of the cause (its transaction, when it has one),
 * so an event exists exactly when what it reports was recorded. Sending is the deliverer's job.
 */
import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { WebhookEvent } from 'skill-market/registry';
import type { Database } from '../../../db';
import { webhookDeliveries, webhookEndpoints } from '../../../db/schema';

/** The `webhook-id` of a new event, as Standard Webhooks names them (`msg_…`). */
const newEventId = () => `msg_${randomBytes(16).toString('base64url')}`;

/** The body every delivery carries: `{ type, timestamp, data }` (data versioned by `data.version`). */
function eventBody(type: WebhookEvent, at: Date, data: Record<string, unknown>) {
  return { type, timestamp: at.toISOString(), data: { version: 1, ...data } };
}

type Writer = Pick<Database, 'select' | 'insert'>;

/** Stores `type` for every endpoint of `userId` that wants it (and for `only` alone when given); returns how many. */
export async function emitEvent(
  db: Writer,
  event: { userId: string; type: WebhookEvent; data: Record<string, unknown>; at: Date; only?: string },
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
  await db.insert(webhookDeliveries).values(
    endpoints.map((e) => ({
      endpointId: e.id,
      eventId,
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
