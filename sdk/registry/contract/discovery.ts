/**
 * Bazaar discovery: the x402 `bazaar` extension's catalogue API (`GET /discovery/resources`,
 * `GET /discovery/search`), as standard x402 tooling (`withBazaar` of `@x402/extensions`) reads it.
 */
import { type Static, Type as T } from '@sinclair/typebox';
import { ADDRESS_PATTERN, Cursor, PageLimit, QueryInteger, Timestamp } from './common';

/**
 * The most `offset` of `GET /discovery/resources` may skip; page further with
 * `GET /discovery/search` and its cursor.
 *
 * @example
 * await fetch(`${registry}/discovery/resources?limit=100&offset=${MAX_DISCOVERY_OFFSET}`); // the deepest page asked for
 */
export const MAX_DISCOVERY_OFFSET = 100_000;

const Filters = {
  type: T.Optional(T.String({ maxLength: 32, description: 'resource type: http (every skill) or mcp (none)' })),
  payTo: T.Optional(T.String({ pattern: ADDRESS_PATTERN, description: 'the 0x address paid (a skill’s paymentAddress)' })),
  scheme: T.Optional(T.String({ maxLength: 32, description: 'payment scheme: exact (every skill)' })),
  network: T.Optional(
    T.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,64}$|^[a-z][a-z0-9-]{0,40}$',
      description: 'CAIP-2 payment network, e.g. eip155:8453 (or the v1 names base, base-sepolia)',
    }),
  ),
  extensions: T.Optional(
    T.String({ maxLength: 100, description: 'extension keys each resource must carry, comma-separated: bazaar (every skill)' }),
  ),
  limit: T.Optional(PageLimit('resources per page, 1–100, default 20')),
};

/**
 * Query of `GET /discovery/resources` (public): the active skills whose server is not down, as
 * x402 resources, oldest listing first (new ones are added at the end, so offsets stay stable).
 * Each filter narrows: `payTo`, `network` exactly; `type` `http`, `scheme` `exact` and
 * `extensions` `bazaar` hold for every skill (any other value lists none). `limit` 1–100, default
 * 20; `offset` 0–{@link MAX_DISCOVERY_OFFSET}, default 0. A value outside these is a 400.
 */
export const DiscoveryResourcesQuery = T.Object({
  ...Filters,
  offset: T.Optional(QueryInteger('offset', 0, MAX_DISCOVERY_OFFSET, `resources to skip, 0–${MAX_DISCOVERY_OFFSET}, default 0`)),
});
/** The {@link DiscoveryResourcesQuery} schema's type. */
export type DiscoveryResourcesQuery = Static<typeof DiscoveryResourcesQuery>;

/**
 * Query of `GET /discovery/search` (public): the same skills and filters as
 * {@link DiscoveryResourcesQuery}, matched and ranked by the registry's skill search (every word a
 * prefix, one misspelt word tolerated). Without `query`, newest first. Pages by `cursor`, the
 * `pagination.cursor` of the previous answer.
 */
export const DiscoverySearchQuery = T.Object({
  query: T.Optional(T.String({ maxLength: 200, description: 'what to look for, in words' })),
  ...Filters,
  cursor: T.Optional(Cursor),
});
/** The {@link DiscoverySearchQuery} schema's type. */
export type DiscoverySearchQuery = Static<typeof DiscoverySearchQuery>;

const Terms = {
  network: T.String({ description: 'CAIP-2 network' }),
  amount: T.String({ pattern: '^[0-9]+$', description: 'atomic units of the asset' }),
  asset: T.String({ pattern: ADDRESS_PATTERN, description: 'the token contract' }),
  payTo: T.String({ pattern: ADDRESS_PATTERN }),
  maxTimeoutSeconds: T.Integer({ minimum: 1 }),
};

/**
 * One way to pay for a resource: x402 v2 PaymentRequirements, exactly what the skill's server asks
 * in its 402: `exact` (`extra` is the token's EIP-712 domain), and `batch-settlement` (a payment
 * channel; `extra` adds the receiver authorizer and withdraw delay) where the server sells the skill
 * over channels and said so in its health answer.
 */
export const DiscoveryRequirements = T.Union([
  T.Object({
    scheme: T.Literal('exact'),
    ...Terms,
    extra: T.Object({ name: T.String(), version: T.String() }, { description: 'the token’s EIP-712 domain name and version' }),
  }),
  T.Object({
    scheme: T.Literal('batch-settlement'),
    ...Terms,
    extra: T.Object(
      {
        receiverAuthorizer: T.String({ pattern: ADDRESS_PATTERN }),
        withdrawDelay: T.Integer({ description: 'seconds' }),
        name: T.String(),
        version: T.String(),
        minDeposit: T.Optional(T.String({ pattern: '^[0-9]+$' })),
      },
      { description: 'the channel’s receiver authorizer and withdraw delay, the token’s EIP-712 domain' },
    ),
  }),
]);

/**
 * A skill as an x402 resource (the `DiscoveryResource` of `@x402/extensions`): `resource` is its
 * call URL (POST JSON there), `accepts` its payment terms, `serviceName` its name, `tags` its
 * groups, `iconUrl` its creator’s https avatar, and `extensions.bazaar` describes the call: `info`
 * (input: POST with a JSON body, an example body; output: JSON, an example when the output schema
 * gives one) and `schema`, the JSON Schema (2020-12) `info` satisfies, holding the skill's input
 * schema as the body's and its output schema as the example's.
 */
export const DiscoveryResource = T.Object({
  resource: T.String({ description: 'the skill’s call URL' }),
  type: T.Literal('http'),
  x402Version: T.Literal(2),
  accepts: T.Array(DiscoveryRequirements),
  lastUpdated: Timestamp('when the listing last changed'),
  description: T.Optional(T.String()),
  mimeType: T.Optional(T.String()),
  serviceName: T.Optional(T.String({ maxLength: 32 })),
  tags: T.Optional(T.Array(T.String({ maxLength: 32 }), { maxItems: 5 })),
  iconUrl: T.Optional(T.String({ maxLength: 2048 })),
  extensions: T.Object({
    bazaar: T.Object({ info: T.Record(T.String(), T.Unknown()), schema: T.Record(T.String(), T.Unknown()) }),
  }),
});
/** The {@link DiscoveryResource} schema's type. */
export type DiscoveryResource = Static<typeof DiscoveryResource>;

/** Answer of `GET /discovery/resources`: one page, and how many resources match in all. */
export const DiscoveryResourcesAnswer = T.Object({
  x402Version: T.Literal(2),
  items: T.Array(DiscoveryResource),
  pagination: T.Object({
    limit: T.Integer({ description: 'the page size asked for' }),
    offset: T.Integer({ description: 'resources skipped' }),
    total: T.Integer({ description: 'resources matching the filters' }),
  }),
});
/** The {@link DiscoveryResourcesAnswer} schema's type. */
export type DiscoveryResourcesAnswer = Static<typeof DiscoveryResourcesAnswer>;

/** Answer of `GET /discovery/search`: one page; `pagination.cursor` asks for the next, null on the last. */
export const DiscoverySearchAnswer = T.Object({
  x402Version: T.Literal(2),
  resources: T.Array(DiscoveryResource),
  partialResults: T.Boolean({ description: 'always false: every match is reachable through the cursor' }),
  pagination: T.Object({
    limit: T.Integer({ description: 'the page size asked for' }),
    cursor: T.Union([Cursor, T.Null()], { description: 'the next page’s cursor; null on the last page' }),
  }),
});
/** The {@link DiscoverySearchAnswer} schema's type. */
export type DiscoverySearchAnswer = Static<typeof DiscoverySearchAnswer>;
