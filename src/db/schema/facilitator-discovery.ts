import { index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The facilitator's Bazaar catalogue: one row per x402 resource whose `bazaar` declaration it saw
 * echoed in a payment it verified or settled (validated against the declaration's own schema),
 * served by its `GET /discovery/resources` and `/discovery/search`. `key` names the resource as
 * the bazaar specification says: its URL without query (its route template in place of the path
 * when it gives a valid one), and for an MCP tool the tool's name too. A later payment for the
 * same resource replaces what was recorded. `accepts` holds what the resource asks: its live 402's
 * offers verbatim in the server's order once read (`live_at`), until then the payment requirements
 * seen (one per scheme, network, asset and payee, the latest of each). An HTTP resource's 402 is
 * read again every refresh interval (`checked_at`); one that stops answering a 402 with offers
 * keeps its last terms from `failing_since` on, and is dropped once that is older than the bound.
 */
export const facilitatorResources = pgTable(
  'facilitator_resources',
  {
    key: text('key').primaryKey(),
    resource: text('resource').notNull(),
    type: text('type', { enum: ['http', 'mcp'] }).notNull(),
    accepts: jsonb('accepts').$type<Record<string, unknown>[]>().notNull(),
    description: text('description'),
    mimeType: text('mime_type'),
    serviceName: text('service_name'),
    tags: jsonb('tags').$type<string[]>(),
    iconUrl: text('icon_url'),
    /** `{bazaar: {info, schema}}` as declared (routeTemplate included when valid). */
    extensions: jsonb('extensions').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    /** When `accepts` was last read from the live 402; null while it holds the paid terms. */
    liveAt: timestamp('live_at', { withTimezone: true }),
    /** The last read of the live 402 (successful or not); null when one is due at once. */
    checkedAt: timestamp('checked_at', { withTimezone: true }),
    /** The first failed read since the last successful one (or since catalogued); null while reads succeed. */
    failingSince: timestamp('failing_since', { withTimezone: true }),
  },
  (t) => [index('facilitator_resources_listing_idx').on(t.createdAt, t.key), index('facilitator_resources_check_idx').on(t.checkedAt)],
);
