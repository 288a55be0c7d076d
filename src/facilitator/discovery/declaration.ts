/**
 * A `bazaar` declaration echoed in a payment, read as the x402 bazaar extension tells a
 * facilitator to: `info` validated against the declaration's own `schema` (2020-12, same-document
 * references only, nothing fetched), the resource named by its URL without query (or its valid
 * `routeTemplate`), MCP tools by URL and tool name, and the service metadata soft-dropped where it
 * breaks the rules.
 */
import { withSchemaOnce } from 'skill-market/json-schema';
import { catalogueIconUrl, catalogueTags, isCatalogueText } from 'skill-market/x402';

/** What the catalogue records of one resource. */
export interface DiscoveredResource {
  key: string;
  resource: string;
  type: 'http' | 'mcp';
  /** The payment requirements the payment was for. */
  requirements: Record<string, unknown>;
  description: string | null;
  mimeType: string | null;
  serviceName: string | null;
  tags: string[] | null;
  iconUrl: string | null;
  extensions: { bazaar: Record<string, unknown> };
}

/** No declaration; one rejected (why, as the EXTENSION-RESPONSES `rejectedReason`); or one to record. */
export type Declaration = { type: 'none' } | { type: 'rejected'; reason: string } | { type: 'found'; resource: DiscoveredResource };

const MAX_URL = 2048;
const MAX_DESCRIPTION = 1000;
const MAX_DECLARATION_BYTES = 64 * 1024;
const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
const ROUTE_TEMPLATE = /^\/[a-zA-Z0-9_/:.\-~%]+$/;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const rejected = (reason: string): Declaration => ({ type: 'rejected', reason });

/** Reads the `bazaar` declaration of a verify or settle request body (x402 v2 only). */
export function readDeclaration(body: unknown): Declaration {
  if (!isRecord(body) || !isRecord(body.paymentPayload) || body.paymentPayload.x402Version !== 2) return { type: 'none' };
  const payload = body.paymentPayload;
  const declared = isRecord(payload.extensions) ? payload.extensions.bazaar : undefined;
  if (declared === undefined) return { type: 'none' };
  if (!isRecord(declared) || !isRecord(declared.info) || !isRecord(declared.schema))
    return rejected('bazaar must hold the objects info and schema');
  if (JSON.stringify(declared).length > MAX_DECLARATION_BYTES) return rejected(`bazaar declaration over ${MAX_DECLARATION_BYTES} bytes`);
  const { info, schema } = declared;
  if (hasOutsideReference(schema)) return rejected('schema refers outside itself ($ref and $id must start with #)');
  // Compiled for this payment alone and dropped (a catalogue of strangers' schemas must not grow the cache).
  const valid = withSchemaOnce({ ...schema, $schema: DRAFT_2020_12 }, (check) => check(info));
  if (valid === undefined) return rejected('schema is not a usable JSON Schema (2020-12)');
  if (!valid) return rejected('info failed schema validation');
  const input = isRecord(info.input) ? info.input : undefined;
  const type = input?.type;
  if (type !== 'http' && type !== 'mcp') return rejected('info.input.type must be http or mcp');
  if (type === 'mcp' && (typeof input?.toolName !== 'string' || input.toolName === ''))
    return rejected('an MCP tool needs info.input.toolName');
  const resource = isRecord(payload.resource) ? payload.resource : undefined;
  const url = resourceUrl(resource?.url);
  if (!url) return rejected('the payment names no http(s) resource URL');
  const requirements = isRecord(body.paymentRequirements)
    ? body.paymentRequirements
    : isRecord(payload.accepted)
      ? payload.accepted
      : undefined;
  if (!requirements) return rejected('the payment names no requirements');
  const template = routeTemplate(declared.routeTemplate);
  const base = template ? `${url.origin}${template}` : `${url.origin}${url.pathname}`;
  const key = type === 'mcp' ? `${base}#tool=${input!.toolName as string}` : base;
  const tags = Array.isArray(resource?.tags) ? catalogueTags(resource.tags.filter((t): t is string => typeof t === 'string')) : [];
  return {
    type: 'found',
    resource: {
      key,
      resource: `${url.origin}${url.pathname}`,
      type,
      requirements,
      description: text(resource?.description, MAX_DESCRIPTION),
      mimeType: text(resource?.mimeType, 200),
      serviceName: typeof resource?.serviceName === 'string' && isCatalogueText(resource.serviceName) ? resource.serviceName : null,
      tags: tags.length > 0 ? tags : null,
      iconUrl: typeof resource?.iconUrl === 'string' ? (catalogueIconUrl(resource.iconUrl) ?? null) : null,
      extensions: { bazaar: { info, schema, ...(template ? { routeTemplate: template } : {}) } },
    },
  };
}

function resourceUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string' || value.length > MAX_URL) return undefined;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A route template the specification allows as a catalogue key; undefined otherwise (the concrete path is used). */
function routeTemplate(value: unknown): string | undefined {
  if (typeof value !== 'string' || !ROUTE_TEMPLATE.test(value)) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return undefined;
  }
  return decoded.includes('..') || decoded.includes('://') ? undefined : value;
}

function text(value: unknown, max: number): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.slice(0, max) : null;
}

/** Whether any `$ref` or `$id` in the schema points anywhere but inside the same document. */
function hasOutsideReference(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasOutsideReference);
  if (!isRecord(node)) return false;
  for (const [key, value] of Object.entries(node)) {
    if ((key === '$ref' || key === '$id') && (typeof value !== 'string' || !value.startsWith('#'))) return true;
    if (hasOutsideReference(value)) return true;
  }
  return false;
}
