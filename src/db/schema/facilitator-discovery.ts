import { index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The facilitator's Bazaar catalogue: one row per x402 resource whose `bazaar` declaration it saw
 * echoed in a payment it verified or settled (validated against the declaration's own schema),
 * served by its `GET /discovery/resources` and `/discovery/search`. `key` names the resource as
 * the bazaar specification says: its URL without query (its route template in place of the path
 * when it gives a valid one), and for an MCP tool the tool's name too. A later payment for the
 * same resource replaces what was recorded. `accepts` holds the payment requirements seen, one per
 * scheme, network, asset and payee, the latest of each.
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
  },
  (t) => [index('facilitator_resources_listing_idx').on(t.createdAt, t.key)],
);
