import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * JSON Schema checks (ajv): a schema's validity and a value against a schema, draft-07 and 2020-12.
 *
 * @example
 * import { schemaProblem, validateAgainst } from 'skill-market/json-schema';
 *
 * const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
 * schemaProblem(schema); // undefined: usable
 * validateAgainst(schema, { text: 42 }); // [{ path: '/text', message: 'must be string' }]
 *
 * @module skill-market/json-schema
 */

/**
 * JSON Schema checks shared by the registry (schemas are valid at registration), the skill
 * server and the consumer client (input is valid before any payment). Draft-07 by default;
 * a schema whose `$schema` names 2020-12 is read as 2020-12.
 */
export type JsonSchema = Record<string, unknown>;

/**
 * Largest schema accepted, as JSON text.
 *
 * @example
 * schemaProblem({ description: 'x'.repeat(MAX_SCHEMA_BYTES) }); // 'must be at most 65536 bytes of JSON'
 */
export const MAX_SCHEMA_BYTES = 64 * 1024;

const draft07 = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const draft2020 = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const cache = new WeakMap<object, ValidateFunction>();
/** Engines of withSchemaOnce, made on first use: nothing it compiles and drops touches what validateAgainst keeps. */
let once: { draft07: Ajv; draft2020: Ajv } | undefined;

function engineFor(schema: JsonSchema): Ajv {
  return typeof schema.$schema === 'string' && schema.$schema.includes('2020-12') ? draft2020 : draft07;
}

/**
 * Undefined when `schema` is a usable JSON Schema object, else why not.
 *
 * @example
 * import { schemaProblem } from 'skill-market/json-schema';
 *
 * schemaProblem({ type: 'object', properties: { text: { type: 'string' } } }); // undefined: usable
 * schemaProblem({ type: 'strnig' }); // why not, e.g. '/type must be equal to one of the allowed values'
 */
export function schemaProblem(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema object';
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) return `must be at most ${MAX_SCHEMA_BYTES} bytes of JSON`;
  const engine = engineFor(schema as JsonSchema);
  if (!engine.validateSchema(schema as JsonSchema)) return describe(engine.errors ?? []);
  try {
    validatorFor(schema as JsonSchema);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

/** A validation error, as a client reads it. */
export interface ValueProblem {
  path: string;
  message: string;
}

/**
 * The problems of `value` against `schema` (empty when valid).
 *
 * @example
 * import { validateAgainst } from 'skill-market/json-schema';
 *
 * const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
 * validateAgainst(schema, { text: 'hello' }); // []
 * validateAgainst(schema, {}); // [{ path: '/', message: "must have required property 'text'" }]
 */
export function validateAgainst(schema: JsonSchema, value: unknown): ValueProblem[] {
  const validate = validatorFor(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? 'is invalid' }));
}

/**
 * Runs `use` with a check of values against `schema`, for a schema built for one use (an answer
 * assembled per request): it is compiled on engines of its own and dropped afterwards, where
 * {@link validateAgainst} keeps what it compiled for the next call. Undefined when `schema` does
 * not compile.
 *
 * @example
 * import { withSchemaOnce } from 'skill-market/json-schema';
 *
 * const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
 * withSchemaOnce(schema, (valid) => [{ n: 1 }, {}].filter(valid)); // [{ n: 1 }]
 */
export function withSchemaOnce<T>(schema: JsonSchema, use: (valid: (value: unknown) => boolean) => T): T | undefined {
  once ??= {
    draft07: new Ajv({ strict: false, validateFormats: false }),
    draft2020: new Ajv2020({ strict: false, validateFormats: false }),
  };
  const engine = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12') ? once.draft2020 : once.draft07;
  try {
    let validate: ValidateFunction;
    try {
      validate = engine.compile(schema);
    } catch {
      return undefined;
    }
    return use((value) => validate(value) === true);
  } finally {
    engine.removeSchema(schema);
  }
}

function validatorFor(schema: JsonSchema): ValidateFunction {
  let validate = cache.get(schema);
  if (!validate) {
    validate = engineFor(schema).compile(schema);
    cache.set(schema, validate);
  }
  return validate;
}

function describe(errors: ErrorObject[]): string {
  const first = errors[0];
  return first ? `${first.instancePath || 'schema'} ${first.message ?? 'is invalid'}`.trim() : 'is not a valid JSON Schema';
}
