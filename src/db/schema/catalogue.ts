import { sql } from 'drizzle-orm';
import { bigint, boolean, customType, index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './users';

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** A creator's named group of skills; the slug is global and stable. */
export const skillGroups = pgTable(
  'skill_groups',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull().unique('skill_groups_slug_key'),
    name: text('name').notNull(),
    description: text('description'),
    icon: text('icon'),
    isActive: boolean('is_active').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('skill_groups_creator_name_key').on(t.creatorId, sql`lower(${t.name})`)],
);

/**
 * A registered skill. `endpoint` is the full call URL. The price is integer micro-USDC
 * (atomic units), never a float. `search` is the weighted full-text document: the name (A)
 * ranks above the description (B).
 */
export const skills = pgTable(
  'skills',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    slug: text('slug').notNull().unique('skills_slug_key'),
    description: text('description'),
    priceAtomic: bigint('price_atomic', { mode: 'bigint' }).notNull(),
    /** When the owner last set the price by an edit (PATCH, the dashboard): re-registration then keeps it. */
    priceEditedAt: timestamp('price_edited_at', { withTimezone: true }),
    /** For a day after a price cut, the price before it: the least a call must pay to count (skills/count-floor.ts). */
    countFloorAtomic: bigint('count_floor_atomic', { mode: 'bigint' }),
    /** When {@link countFloorAtomic} stops applying. */
    countFloorUntil: timestamp('count_floor_until', { withTimezone: true }),
    network: text('network').notNull(),
    endpoint: text('endpoint').notNull(),
    paymentAddress: text('payment_address').notNull(),
    /** Address of the key the skill server signs its answers' receipts with (sent at registration); null: it signs none. */
    receiptSigner: text('receipt_signer'),
    inputSchema: jsonb('input_schema'),
    outputSchema: jsonb('output_schema'),
    category: text('category'),
    /** The free trial the skill server gives (`{ calls, period }`), as registered; null without. */
    trial: jsonb('trial').$type<{ calls: number; period: 'day' | 'week' | 'month' }>(),
    /** Volume prices (`{ period, steps: [{ after, priceAtomic }] }`, priceAtomic as decimal text), as registered; null without. */
    tiers: jsonb('tiers').$type<{ period: 'day' | 'week' | 'month'; steps: { after: number; priceAtomic: string }[] }>(),
    /**
     * Whether `priceAtomic` is the most a call costs, the skill charging what each call used (x402
     * `upto`, or less on a payment channel); false: a flat price per call. From the skill's
     * definition, sent at registration.
     */
    usageBased: boolean('usage_based').notNull().default(false),
    /** When the owner last set the trial by an edit (PATCH, the dashboard): re-registration then keeps it. */
    trialEditedAt: timestamp('trial_edited_at', { withTimezone: true }),
    /** When the owner last set the volume prices by an edit: re-registration then keeps them. */
    tiersEditedAt: timestamp('tiers_edited_at', { withTimezone: true }),
    isActive: boolean('is_active').notNull().default(true),
    verified: boolean('verified').notNull().default(false),
    /** Set while the operators hide the listing: gone from discovery; its creator sees why. Counts and revenue stay. */
    hiddenAt: timestamp('hidden_at', { withTimezone: true }),
    hiddenReason: text('hidden_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    /** The skill server's base URL: the endpoint without its last path segment (`/<name>`) and query; health is kept per server. */
    serverUrl: text('server_url').notNull().generatedAlwaysAs(sql`regexp_replace(endpoint, '/[^/?#]*([?#].*)?$', '')`),
    search: tsvector('search').generatedAlwaysAs(
      sql`setweight(to_tsvector('english', coalesce(name, '')), 'A') || setweight(to_tsvector('english', coalesce(description, '')), 'B')`,
    ),
  },
  (t) => [
    uniqueIndex('skills_creator_name_key').on(t.creatorId, t.name),
    index('skills_search_idx').using('gin', t.search),
    /** Trigram index on the name: typo-tolerant search (pg_trgm, created by migration 0007). */
    index('skills_name_trgm_idx').using('gin', t.name.op('gin_trgm_ops')),
    index('skills_created_at_idx').on(t.createdAt, t.id),
    index('skills_price_idx').on(t.priceAtomic, t.id),
    index('skills_server_url_idx').on(t.serverUrl),
    /** One endpoint is listed once: registration looks it up (skills/intake.ts). */
    index('skills_endpoint_idx').on(t.endpoint),
  ],
);

export const skillGroupMembers = pgTable(
  'skill_group_members',
  {
    skillId: uuid('skill_id')
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    groupId: uuid('group_id')
      .notNull()
      .references(() => skillGroups.id, { onDelete: 'restrict' }),
  },
  (t) => [primaryKey({ columns: [t.skillId, t.groupId] }), index('skill_group_members_group_idx').on(t.groupId)],
);
