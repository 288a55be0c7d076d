import type { JsonSchema } from '../../json-schema/index';

const MAX_DEPTH = 8;
const MAX_ITEMS = 8;
const WORD = 'example';

/**
 * A small value of the shape `schema` describes, for a catalogue's example call: only required
 * properties, the fewest items, the first of `enum`, a schema's own `const`, `default` or example,
 * the least number allowed. Not checked here (a pattern or a format may still refuse it); undefined
 * where no value is found, e.g. a reference outside the schema.
 *
 * @internal
 */
export function sampleOf(schema: JsonSchema): unknown {
  return sample(schema, schema, 0);
}

function sample(node: unknown, root: JsonSchema, depth: number): unknown {
  if (node === true) return null;
  if (typeof node !== 'object' || node === null || Array.isArray(node) || depth > MAX_DEPTH) return undefined;
  const s = node as Record<string, unknown>;
  if (typeof s.$ref === 'string') return sample(resolve(root, s.$ref), root, depth + 1);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  if ('default' in s) return s.default;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (Array.isArray(s.allOf)) return merged(s.allOf.map((part) => sample(part, root, depth + 1)));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return sample(options[0], root, depth + 1);
  }
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const type = types.find((t) => t !== 'null') ?? types[0] ?? (s.properties ? 'object' : undefined);
  switch (type) {
    case 'object':
      return objectSample(s, root, depth);
    case 'array': {
      const count = Math.min(typeof s.minItems === 'number' ? s.minItems : 0, MAX_ITEMS);
      const item = count > 0 ? sample(s.items ?? true, root, depth + 1) : undefined;
      return count > 0 && item === undefined ? undefined : Array.from({ length: count }, () => item);
    }
    case 'string': {
      const min = Math.min(typeof s.minLength === 'number' ? s.minLength : 0, 1024);
      const text = WORD.padEnd(min, 'e');
      return typeof s.maxLength === 'number' ? text.slice(0, s.maxLength) : text;
    }
    case 'integer':
    case 'number':
      return numberSample(s, type === 'integer');
    case 'boolean':
      return false;
    case 'null':
      return null;
    case undefined:
      return null; // any value passes an untyped schema of no other keyword
    default:
      return undefined;
  }
}

function objectSample(s: Record<string, unknown>, root: JsonSchema, depth: number): Record<string, unknown> | undefined {
  const properties = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Array.isArray(s.required) ? s.required : []) {
    if (typeof key !== 'string') continue;
    const value = sample(properties[key] ?? true, root, depth + 1);
    if (value === undefined) return undefined;
    out[key] = value;
  }
  return out;
}

function numberSample(s: Record<string, unknown>, integer: boolean): number {
  const num = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : undefined);
  let value = num('minimum') ?? (num('exclusiveMinimum') !== undefined ? num('exclusiveMinimum')! + 1 : 0);
  const top = num('maximum') ?? (num('exclusiveMaximum') !== undefined ? num('exclusiveMaximum')! - 1 : undefined);
  if (top !== undefined && value > top) value = top;
  return integer ? Math.ceil(value) : value;
}

/** The samples of `allOf`'s parts as one: objects merged, else the first. */
function merged(parts: unknown[]): unknown {
  if (parts.some((p) => p === undefined)) return undefined;
  if (parts.every((p) => typeof p === 'object' && p !== null && !Array.isArray(p))) return Object.assign({}, ...parts);
  return parts[0];
}

/** The node a local reference (`#`, `#/a/b`) points at in `root`; undefined for any other. */
function resolve(root: JsonSchema, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
