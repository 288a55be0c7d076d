/**
 * The registry's API reference in Markdown, docs/registry-api.md, generated from what the registry
 * serves: its OpenAPI document (`GET /openapi.json`, built from the route table REGISTRY_ROUTES),
 * with each route's access level from the route table. test/docs/api-reference.test.ts fails when
 * the committed file differs from what this writes.
 *
 *   bun scripts/api-reference.ts           writes docs/registry-api.md   (npm run docs:reference)
 *   bun scripts/api-reference.ts --check   exits 1 when docs/registry-api.md is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { slug } from 'github-slugger';
import { REGISTRY_ROUTES, type Route, type RouteAccess } from 'skill-market/registry';

export const REFERENCE_FILE = join(import.meta.dir, '..', 'docs', 'registry-api.md');

type Schema = {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  items?: Schema;
};
interface Operation {
  tags?: string[];
  summary?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, unknown>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, { post?: { summary?: string } }>;
}

/** Who may call a route, in the words of the route table's access levels (RouteAccess). */
export const ACCESS: Record<RouteAccess, string> = {
  public: 'anyone, no credential',
  consumer: 'a session (the access cookie, or its token as `Authorization: Bearer`), a consumer key `ck_…` or a creator key `sk_…`',
  creator: 'a session or a creator key `sk_…`; a consumer key gets 403',
  account: 'a session only; any API key gets 403 (a leaked key cannot mint keys or redirect webhooks)',
  'consumer-or-payment': 'consumer credentials, or none for a body that reports an on-chain payment (verified before it counts)',
  'provider-token': "an identity provider's access token as `Authorization: Bearer`, exchanged for a session",
  'refresh-token': 'the HttpOnly refresh cookie, or the refresh token in the body',
};

const CREDENTIAL = JSON.stringify([{ bearer: [] }, { cookie: [] }]);
const OPTIONAL_CREDENTIAL = JSON.stringify([{}, { bearer: [] }, { cookie: [] }]);

/** What the served document says of a route's credentials, in the route table's terms. */
export function securityOf(operation: Operation): 'none' | 'credential' | 'optional credential' {
  const security = JSON.stringify(operation.security ?? []);
  if (security === '[]') return 'none';
  if (security === CREDENTIAL) return 'credential';
  if (security === OPTIONAL_CREDENTIAL) return 'optional credential';
  throw new Error(`unexpected security ${security}`);
}

/** The security the served document must show for a route of `access`. */
export function expectedSecurity(access: RouteAccess): ReturnType<typeof securityOf> {
  if (access === 'consumer' || access === 'creator' || access === 'account') return 'credential';
  if (access === 'consumer-or-payment') return 'optional credential';
  return 'none';
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
/** `/skills/{slug}` as the route table writes it: `/skills/:slug`. */
const tablePath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

function enumOf(schema: Schema | undefined): string {
  return schema?.enum ? ` (${schema.enum.join(', ')})` : '';
}

function fields(schema: Schema | undefined): string {
  if (!schema) return '';
  if (schema.anyOf?.every((s) => s.properties)) return schema.anyOf.map((s) => `{${fields(s)}}`).join(' or ');
  if (!schema.properties) return schema.type === 'array' ? `[${fields(schema.items)}]` : (schema.type ?? 'JSON');
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties)
    .map(([name, property]) => `${name}${required.has(name) ? '' : '?'}${enumOf(property)}`)
    .join(', ');
}

function inputOf(operation: Operation): string {
  const parts: string[] = [];
  const query = (operation.parameters ?? []).filter((p) => p.in === 'query');
  if (query.length > 0) parts.push(`query: ${query.map((p) => `${p.name}${p.required ? '' : '?'}${enumOf(p.schema)}`).join(', ')}`);
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (body) parts.push(`body: ${fields(body)}`);
  return parts.map((p) => `<code>${p}</code>`).join('<br>');
}

/**
 * The reference of the served document `openapi` with the access levels of `routes`: one table per
 * tag (route, access, summary, input, answer statuses), in the document's order, then the webhook
 * events. Throws when the two disagree on a route's credentials, so a stale route table cannot pass.
 */
export function renderApiReference(openapi: OpenApiDocument, routes: Record<string, Route> = REGISTRY_ROUTES): string {
  const byKey = new Map(Object.values(routes).map((route) => [`${route.method} ${route.path}`, route]));
  const tags = new Map<string, string[]>();
  for (const [path, operations] of Object.entries(openapi.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const key = `${method.toUpperCase()} ${tablePath(path)}`;
      const route = byKey.get(key);
      const security = securityOf(operation);
      const access = route?.access ?? (security === 'none' ? 'public' : undefined);
      if (!access || expectedSecurity(access) !== security) {
        throw new Error(`${key}: the route table says ${route?.access ?? 'nothing'}, the served document ${security}`);
      }
      const tag = operation.tags?.[0] ?? 'Other';
      const answers = Object.keys(operation.responses ?? {}).join(', ');
      const page = route ? '' : ' (served for the web pages, not in the route table)';
      const row = `| \`${key}\` | ${access} | ${cell(operation.summary ?? '')}${page} | ${cell(inputOf(operation))} | ${answers} |`;
      tags.set(tag, [...(tags.get(tag) ?? []), row]);
    }
  }
  const events = Object.entries(openapi.webhooks ?? {});
  const lines = [
    '# Registry API reference',
    '',
    '<!-- Generated by `npm run docs:reference` (scripts/api-reference.ts) from the registry’s /openapi.json; do not edit. -->',
    '',
    'Every route of the registry’s HTTP API, generated from the OpenAPI document the registry serves',
    '(`GET /openapi.json`, built from the route table `REGISTRY_ROUTES` of `skill-market/registry`), with',
    'each route’s access level from that table. The registry shows the same document with every schema at',
    '`/docs`. How the API behaves (the error shape, paging, caching, request ids, limits): [API',
    'conventions](operators.md#api-conventions); what the routes do for each reader: [consumers](consumers.md),',
    '[creators](creators.md). Paths are written `/skills/:slug` as in the route table (`/skills/{slug}` in the',
    'OpenAPI document). In the input column a name ending in `?` is optional; `(a, b)` lists the allowed values.',
    '',
    '## Contents',
    '',
    '- [Access levels](#access-levels)',
    ...[...tags.keys()].map((tag) => `- [${tag}](#${slug(tag)})`),
    ...(events.length > 0 ? ['- [Webhook events](#webhook-events)'] : []),
    '',
    '## Access levels',
    '',
    'Without a credential a protected route answers 401; with one of the wrong kind, 403.',
    '',
    '| access | who may call |',
    '| --- | --- |',
    ...Object.entries(ACCESS).map(([access, who]) => `| ${access} | ${cell(who)} |`),
  ];
  for (const [tag, rows] of tags) {
    lines.push('', `## ${tag}`, '', '| route | access | summary | input | answers |', '| --- | --- | --- | --- | --- |', ...rows);
  }
  if (events.length > 0) {
    lines.push(
      '',
      '## Webhook events',
      '',
      'POSTed to a creator’s webhook endpoints, signed by the Standard Webhooks convention (see',
      '[creators: webhooks](creators.md#webhooks)).',
      '',
      '| event | summary |',
      '| --- | --- |',
      ...events.map(([type, event]) => `| \`${type}\` | ${cell(event.post?.summary ?? '')} |`),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The OpenAPI document a registry serves, from one built in process on an empty in-memory database. */
export async function servedOpenApi(): Promise<OpenApiDocument> {
  const { loadRegistryConfig } = await import('../src/config');
  const { openEmbedded } = await import('../src/db');
  const { createRegistry } = await import('../src/registry');
  const { createLogger } = await import('../src/log');
  const database = await openEmbedded(undefined);
  try {
    const config = loadRegistryConfig({ NODE_ENV: 'test', READ_CACHE_MS: '0' });
    const app = createRegistry({ database, config, logger: createLogger('silent') });
    return (await (await app.handle(new Request('http://localhost/openapi.json'))).json()) as OpenApiDocument;
  } finally {
    await database.close();
  }
}

/** `markdown` as the repository's formatter (biome, as `npm run lint` checks it) writes docs/registry-api.md. */
export function formatted(markdown: string): string {
  const biome = Bun.spawnSync(
    [join(import.meta.dir, '..', 'node_modules', '.bin', 'biome'), 'format', `--stdin-file-path=${REFERENCE_FILE}`],
    {
      stdin: new TextEncoder().encode(markdown),
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  if (biome.exitCode !== 0) throw new Error(`biome could not format the reference: ${biome.stderr.toString()}`);
  return biome.stdout.toString();
}

if (import.meta.main) {
  const reference = formatted(renderApiReference(await servedOpenApi()));
  if (process.argv.includes('--check')) {
    if (readFileSync(REFERENCE_FILE, 'utf8') !== reference) {
      console.error('docs/registry-api.md is stale: run npm run docs:reference');
      process.exit(1);
    }
    console.log('docs/registry-api.md matches the served /openapi.json');
  } else {
    writeFileSync(REFERENCE_FILE, reference);
    console.log(`wrote ${REFERENCE_FILE}`);
  }
}
