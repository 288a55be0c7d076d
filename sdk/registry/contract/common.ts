/** Building blocks of the registry's wire shapes. */
import { type Static, type TSchema, Type as T } from '@sinclair/typebox';

export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
export const Uuid = (description?: string) => T.String({ format: 'uuid', ...(description ? { description } : {}) });
export const Timestamp = (description?: string) => T.String({ format: 'date-time', ...(description ? { description } : {}) });
export const Nullable = <S extends TSchema>(schema: S, description?: string) =>
  T.Union([schema, T.Null()], description ? { description } : {});
export const AddressString = (description = '0x-prefixed Ethereum address') => T.String({ pattern: ADDRESS_PATTERN, description });

/** Every error answer of the registry: the interface spec's text in `error`, a machine `code`, the request id. */
export const ErrorBody = T.Object({
  error: T.String({ description: 'what went wrong, for people' }),
  code: T.String({ description: 'machine code: VALIDATION, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, RATE_LIMITED, …' }),
  requestId: T.String({ description: 'the X-Request-Id of the request, for support' }),
  details: T.Optional(T.Unknown({ description: 'every problem, for VALIDATION' })),
});

/** `{success: true}`: a write that returns nothing else. */
export const Success = T.Object({ success: T.Literal(true) });
export type Success = Static<typeof Success>;

/** Paged lists: the next page's cursor travels in the X-Next-Cursor header (and a Link header). */
export const NEXT_CURSOR_HEADER = 'x-next-cursor';
export const Cursor = T.String({ maxLength: 512, description: 'the X-Next-Cursor of the previous page' });
/**
 * A whole number in a query string. A number schema with multipleOf 1, not an integer schema: the
 * registry's router turns query numbers from text (Elysia coerces number schemas, not integer ones).
 */
export const QueryInteger = (minimum: number, maximum: number, description: string) =>
  T.Number({ minimum, maximum, multipleOf: 1, description });
export const PageLimit = (description = 'items per page, 1–100, default 20') => QueryInteger(1, 100, description);
export const SlugParam = T.Object({ slug: T.String({ minLength: 1, maxLength: 120 }) });
