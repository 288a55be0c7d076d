/**
 * The x402 `bazaar` extension of one skill: `info` (how to call it: POST a JSON body; what comes
 * back: JSON) and `schema`, the JSON Schema (2020-12) `info` satisfies, which holds the skill's
 * input schema as the body's and its output schema as the paid answer's `result`. The skill
 * server's 402 declares it (`extensions.bazaar`); the registry lists it.
 */
import { type JsonSchema, withSchemaOnce } from '../../json-schema/index';
import type { Skill } from '../skill';
import { sampleOf } from './sample';

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const BODY_AT = '#/properties/input/properties/body';
const RESULT_AT = '#/properties/output/properties/example/properties/result';
/** Keywords whose values are data, not schemas: a `$ref` inside them is left alone. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
/** Keywords whose values map names to schemas (a property may be called `default`). */
const NAMED_SCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

/** A skill's x402 `bazaar` extension: `info` (how to call it, what comes back) and the JSON Schema `info` satisfies. */
export interface BazaarExtension {
  info: {
    input: { type: 'http'; method: 'POST'; bodyType: 'json'; body: unknown };
    output: { type: 'json'; example?: unknown };
  };
  schema: JsonSchema;
}

/**
 * The extension of a skill with these schemas (null: none), as its 402 declares it and the
 * registry lists it. The body example is the input
 * schema's own (`examples`, `example`, `default`) or else a minimal value built from it, the
 * first that satisfies it (when none does, e.g. under a `pattern`, it is `{}` and the schema is
 * kept all the same: it is what a caller needs); the output example is the paid answer
 * `{ success: true, result }` with the output schema's own example, when it gives one.
 *
 * @example
 * const input = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
 * bazaarExtension(input, null).info.input; // { type: 'http', method: 'POST', bodyType: 'json', body: { city: 'example' } }
 */
export function bazaarExtension(inputSchema: JsonSchema | null, outputSchema: JsonSchema | null): BazaarExtension {
  const key = JSON.stringify([inputSchema, outputSchema]);
  let extension = built.get(key);
  if (!extension) {
    extension = buildExtension(inputSchema, outputSchema);
    if (built.size >= BUILT_MAX) built.delete(built.keys().next().value!);
    built.set(key, extension);
  }
  return structuredClone(extension);
}

/**
 * Extensions built, by their schemas' JSON (the oldest dropped past BUILT_MAX): serve() asks for a
 * skill's several times, and each build compiles a JSON Schema checker, a few milliseconds.
 */
const built = new Map<string, BazaarExtension>();
const BUILT_MAX = 256;

function buildExtension(inputSchema: JsonSchema | null, outputSchema: JsonSchema | null): BazaarExtension {
  const full = schemaOf(inputSchema ? embedded(inputSchema, BODY_AT) : {}, outputSchema ? embedded(outputSchema, RESULT_AT) : {});
  // A schema only an older draft can read (e.g. `items` as an array) is described as any JSON.
  const chosen = withSchemaOnce(full, (valid) => pick(valid, inputSchema, outputSchema));
  if (chosen) return { info: chosen, schema: full };
  const loose = schemaOf({}, {});
  return { info: withSchemaOnce(loose, (valid) => pick(valid, null, null))!, schema: loose };
}

function pick(
  valid: (value: unknown) => boolean,
  inputSchema: JsonSchema | null,
  outputSchema: JsonSchema | null,
): BazaarExtension['info'] {
  const input = (body: unknown) => ({ type: 'http' as const, method: 'POST' as const, bodyType: 'json' as const, body });
  const bodies = inputSchema ? [...declaredExamples(inputSchema), sampleOf(inputSchema)] : [{}];
  const body = bodies.find((b) => b !== undefined && valid({ input: input(b) })) ?? {};
  const answers = (outputSchema ? declaredExamples(outputSchema) : []).map((result) => ({ success: true, result }));
  const example = answers.find((a) => valid({ input: input(body), output: { type: 'json', example: a } }));
  return { input: input(body), output: { type: 'json', ...(example ? { example } : {}) } };
}

function schemaOf(body: JsonSchema, result: JsonSchema): JsonSchema {
  return {
    $schema: DRAFT_2020,
    type: 'object',
    properties: {
      input: {
        type: 'object',
        properties: {
          type: { type: 'string', const: 'http' },
          method: { type: 'string', enum: ['POST', 'PUT', 'PATCH'] },
          bodyType: { type: 'string', enum: ['json', 'form-data', 'text'] },
          body,
        },
        required: ['type', 'method', 'bodyType', 'body'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          example: {
            type: 'object',
            properties: { success: { const: true }, result, timestamp: { type: 'string' } },
            required: ['success', 'result'],
          },
        },
        required: ['type'],
      },
    },
    required: ['input'],
  };
}

/** The schema's own examples: `examples`, `example` (OpenAPI's), `default`. */
function declaredExamples(schema: JsonSchema): unknown[] {
  const found: unknown[] = Array.isArray(schema.examples) ? schema.examples.slice(0, 5) : [];
  if ('example' in schema) found.push(schema.example);
  if ('default' in schema) found.push(schema.default);
  return found;
}

/**
 * A copy of `schema` to place at the JSON pointer `at` of another: local references (`#/…`)
 * re-pointed below `at`, and no `$schema` or `$id` (an `$id` would make it a document of its own,
 * and the catalogue's rules forbid ids that are not fragments).
 *
 * @internal
 */
export function embedded(schema: JsonSchema, at: string): JsonSchema {
  const copy = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(copy);
    if (typeof node !== 'object' || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$schema' || key === '$id') continue;
      if (key === '$ref' && typeof value === 'string' && (value === '#' || value.startsWith('#/'))) out[key] = at + value.slice(1);
      else if (DATA_KEYWORDS.has(key)) out[key] = value;
      else if (NAMED_SCHEMAS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, copy(inner)]));
      } else out[key] = copy(value);
    }
    return out;
  };
  return copy(schema) as JsonSchema;
}

/**
 * Largest declaration sent, as JSON: the header carries it base64-encoded beside the terms, and
 * HTTP stacks refuse answers whose headers pass 16 KiB (Node's and undici's default).
 */
const MAX_DECLARATION_BYTES = 8 * 1024;
const declarations = new WeakMap<Skill, BazaarExtension>();

/**
 * The declaration a skill's 402 carries, built once per skill definition: its input and output
 * schemas; past the size bound the output schema is left out, then the input schema too (any JSON
 * in and out, still a call catalogues can list).
 *
 * @internal
 */
export function declarationOf(skill: Skill): BazaarExtension {
  let declared = declarations.get(skill);
  if (declared) return declared;
  const input = skill.inputSchema ?? null;
  for (const [inputSchema, outputSchema] of [
    [input, skill.outputSchema ?? null],
    [input, null],
    [null, null],
  ] as const) {
    declared = bazaarExtension(inputSchema, outputSchema);
    if (JSON.stringify(declared).length <= MAX_DECLARATION_BYTES) break;
  }
  declarations.set(skill, declared!);
  return declared!;
}
