import { sql } from 'drizzle-orm';
import { bigserial, boolean, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users';

/**
 * A creator's webhook endpoints. The signing secret is kept as given out (`whsec_…`): every
 * delivery is signed with it, so it cannot be a one-way hash like an API key; it is shown once
 * and never answered again.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /** Event types delivered here. */
    events: jsonb('events').$type<string[]>().notNull(),
    secret: text('secret').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    /** Why the registry turned it off (deliveries kept failing), until its owner turns it on. */
    disabledReason: text('disabled_reason'),
    /** Deliveries that failed for good in a row; reset by a success. */
    failedInRow: integer('failed_in_row').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('webhook_endpoints_user_idx').on(t.userId)],
);

/**
 * One event for one endpoint, stored before it is sent (in the transaction of what caused it), so
 * a registry stopped mid-delivery sends it after its restart. `eventId` is the `webhook-id` every
 * attempt carries: a receiver that saw it already can tell a redelivery.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    /** Order of storing: of two deliveries with one ordering key, the lower goes first. */
    seq: bigserial('seq', { mode: 'bigint' }).notNull(),
    /**
     * Deliveries of one endpoint with the same key are sent in order, each only once the one
     * before it is delivered or failed for good (a server's down/up, one payment's verified and
     * reverted); null when order does not matter.
     */
    orderingKey: text('ordering_key'),
    type: text('type').notNull(),
    /** The body sent: `{ type, timestamp, data }`. */
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    /** Taken by an instance until then: two instances never send one delivery at once. */
    lockedUntil: timestamp('locked_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_event_endpoint_key').on(t.endpointId, t.eventId),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    index('webhook_deliveries_ordering_idx').on(t.endpointId, t.orderingKey, t.seq).where(sql`${t.status} = 'pending'`),
    check('webhook_deliveries_status_check', sql`${t.status} in ('pending', 'delivered', 'failed')`),
  ],
);

/** Each attempt of a delivery: what the receiver answered (or why nothing came back). */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    at: timestamp('at', { withTimezone: true }).notNull(),
    /** HTTP status, or null when no answer came (refused, timeout, blocked address). */
    status: integer('status'),
    latencyMs: integer('latency_ms'),
    /** The start of the answer's body, or the reason nothing came back. */
    excerpt: text('excerpt'),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.at)],
);
