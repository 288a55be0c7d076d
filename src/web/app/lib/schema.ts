/** Reading the JSON Schemas skills publish: their fields, and an example value for snippets. */
export type JsonSchema = Record<string, unknown>;

export interface Field {
  name: string;
  type: string;
  required: boolean;
  description: string | undefined;
  enum: unknown[] | undefined;
  schema: JsonSchema;
}

const isRecord = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeOf(schema: JsonSchema): string {
  const t = schema.type;
  if (Array.isArray(t)) return t.filter((x) => x !== 'null').join(' | ') || 'null';
  if (typeof t === 'string') return t === 'array' && isRecord(schema.items) ? `array of ${typeOf(schema.items)}` : t;
  if (Array.isArray(schema.enum)) return 'one of';
  return 'any';
}

/** The top-level properties of an object schema, or undefined when the schema is not one. */
export function fieldsOf(schema: JsonSchema | null): Field[] | undefined {
  if (!schema || !isRecord(schema.properties)) return undefined;
  const order = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  const required = new Set(order);
  // Stored schemas lose their key order (PostgreSQL jsonb sorts keys): show required fields first,
  // in the order `required` lists them, then the rest.
  const rank = (name: string) => (required.has(name) ? order.indexOf(name) : order.length);
  const entries = Object.entries(schema.properties).sort(([a], [b]) => rank(a) - rank(b));
  return entries.map(([name, raw]) => {
    const s = isRecord(raw) ? raw : {};
    return {
      name,
      type: typeOf(s),
      required: required.has(name),
      description: typeof s.description === 'string' ? s.description : undefined,
      enum: Array.isArray(s.enum) ? s.enum : undefined,
      schema: s,
    };
  });
}

/** A plausible value for `schema`: its example, default or first enum value, else one by type. */
export function exampleOf(schema: JsonSchema | null, depth = 0): unknown {
  if (!schema || depth > 4) return {};
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return 'text';
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'array':
      return isRecord(schema.items) ? [exampleOf(schema.items, depth + 1)] : [];
    default: {
      const fields = fieldsOf(schema) ?? [];
      const required = fields.filter((f) => f.required);
      return Object.fromEntries((required.length > 0 ? required : fields).map((f) => [f.name, exampleOf(f.schema, depth + 1)]));
    }
  }
}
