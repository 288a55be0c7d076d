/** Building blocks of the registry's wire shapes. */
import { type Static, type TSchema, Type as T } from '@sinclair/typebox';
import { ADDRESS_PATTERN as ADDRESS_REGEXP } from '../../x402/patterns';

/**
 * The pattern of a 0x address on the wire: `0x` and 40 hex digits, any case (the registry answers
 * EIP-55 checksummed addresses; a mixed-case one a client sends must carry a valid checksum where
 * noted).
 *
 * @example
 * new RegExp(ADDRESS_PATTERN).test('0x209693Bc6afc0C5328bA36FaF03C514EF312287C'); // true
 */
export const ADDRESS_PATTERN = ADDRESS_REGEXP.source;
/**
 * Schema of an id on the wire: a UUID string (skills, groups, reviews, API keys, wallets, usage
 * records). `description` documents the field in the registry's OpenAPI.
 *
 * @example
 * const SkillRef = Type.Object({ skillId: Uuid('the skill, as GET /skills lists it') }); // { type: 'string', format: 'uuid', … }
 */
export const Uuid = (description?: string) => T.String({ format: 'uuid', ...(description ? { description } : {}) });
/**
 * Schema of a moment on the wire: an ISO 8601 date-time string in UTC, e.g.
 * `"2026-11-25T08:30:00.000Z"` (`createdAt`, `lastUsedAt`, …).
 *
 * @example
 * const Seen = Type.Object({ lastSeenAt: Timestamp() }); // '2026-11-25T08:30:00.000Z'
 */
export const Timestamp = (description?: string) => T.String({ format: 'date-time', ...(description ? { description } : {}) });
/**
 * `schema` or JSON `null`. On the wire, null means "none" or "not yet" (no description, never
 * used, not revoked); in a `PATCH` body it clears the field, while leaving the field out keeps it.
 *
 * @example
 * const Profile = Type.Object({ bio: Nullable(Type.String({ maxLength: 500 }), 'null: none') }); // string or null
 */
export const Nullable = <S extends TSchema>(schema: S, description?: string) =>
  T.Union([schema, T.Null()], description ? { description } : {});
/**
 * Schema of a 0x address sent to the registry ({@link ADDRESS_PATTERN}), with its description for
 * the OpenAPI document.
 *
 * @example
 * const Payout = Type.Object({ payTo: AddressString('who receives the payments') });
 */
export const AddressString = (description = '0x-prefixed Ethereum address') => T.String({ pattern: ADDRESS_PATTERN, description });

/**
 * Every error answer of the registry (any 4xx or 5xx, from any route): the human text in `error`
 * (the registry API's wording, e.g. `"Authentication required"`), a machine `code` (`VALIDATION`
 * 400, `UNAUTHORIZED` 401, `FORBIDDEN` 403, `NOT_FOUND` 404, `CONFLICT` 409, `RATE_LIMITED` 429, …)
 * and `requestId`, the `X-Request-Id` to quote when asking for support. `details` lists every
 * problem of a `VALIDATION` answer. The SDK's client throws it as a `RegistryError`.
 */
export const ErrorBody = T.Object({
  error: T.String({ description: 'what went wrong, for people' }),
  code: T.String({ description: 'machine code: VALIDATION, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, RATE_LIMITED, …' }),
  requestId: T.String({ description: 'the X-Request-Id of the request, for support' }),
  details: T.Optional(T.Unknown({ description: 'every problem, for VALIDATION' })),
});

/**
 * Answer `{success: true}` of a write that returns nothing else: `POST /auth/logout`,
 * `DELETE /auth/api-keys/:id`, `DELETE /groups/:slug`.
 */
export const Success = T.Object({ success: T.Literal(true) });
/** The {@link Success} schema's type. */
export type Success = Static<typeof Success>;

/**
 * The response header (lower case, as `Headers.get` takes it) carrying the next page's cursor of a
 * paged list: `GET /skills`, `GET /skills/:slug/reviews`, `GET /analytics/usage`. A `Link` header
 * with `rel="next"` gives the same as a relative URL. Absent on the last page.
 *
 * @example
 * const first = await fetch('https://registry.example/skills?q=weather');
 * const next = first.headers.get(NEXT_CURSOR_HEADER); // null on the last page
 * if (next) await fetch(`https://registry.example/skills?q=weather&cursor=${encodeURIComponent(next)}`);
 */
export const NEXT_CURSOR_HEADER = 'x-next-cursor';
/**
 * The `cursor` query parameter of a paged list: the {@link NEXT_CURSOR_HEADER} value of the
 * previous page, sent back as it is (opaque, at most 512 characters). Leave the other parameters
 * as they were; a cursor that does not fit the list's order gives 400.
 */
export const Cursor = T.String({ maxLength: 512, description: 'the X-Next-Cursor of the previous page' });
/**
 * A whole number in a query string, `name` being the parameter's name. A number schema with
 * multipleOf 1, not an integer schema: the registry's router turns query numbers from text (Elysia
 * coerces number schemas, not integer ones). Any value out of range or not a number (0, -1,
 * 1e400, 7.5, "week") is refused with one message naming the parameter and its range.
 *
 * @example
 * const DaysQuery = Type.Object({ days: Type.Optional(QueryInteger('days', 1, 365, 'days of history, default 30')) }); // ?days=7 → 7
 */
export const QueryInteger = (name: string, minimum: number, maximum: number, description: string) =>
  T.Number({
    minimum,
    maximum,
    multipleOf: 1,
    description,
    error: `Invalid request: query field "${name}": must be a whole number from ${minimum} to ${maximum}`,
  });
/**
 * A day in a query string, `name` being the parameter's name: YYYY-MM-DD (UTC), a day of the
 * calendar from 1970-01-01 to 9999-12-31; anything else is a 400 naming the parameter.
 *
 * @example const query = T.Object({ from: T.Optional(QueryDay('from')), to: T.Optional(QueryDay('to')) });
 */
export const QueryDay = (name: string) =>
  T.String({
    format: 'date', // the calendar: no 30 February; the pattern bounds the years
    pattern: '^(19[7-9]\\d|[2-9]\\d{3})-\\d\\d-\\d\\d$',
    description: 'a day, YYYY-MM-DD (UTC), inclusive',
    error: `Invalid request: query field "${name}": must be a day YYYY-MM-DD from 1970-01-01 to 9999-12-31`,
  });
/**
 * The `limit` query parameter of a paged list: items per page, a whole number 1–100, default 20.
 *
 * @example
 * const ListQuery = Type.Object({ limit: Type.Optional(PageLimit()), cursor: Type.Optional(Cursor) });
 */
export const PageLimit = (description = 'items per page, 1–100, default 20') => QueryInteger('limit', 1, 100, description);
/**
 * Path parameters of `GET /skills/:slug`, `PATCH /skills/:slug` and `GET /skills/:slug/reviews`:
 * the skill's `slug`, as the registry assigned it at registration (1–120 characters).
 */
export const SlugParam = T.Object({ slug: T.String({ minLength: 1, maxLength: 120 }) });
