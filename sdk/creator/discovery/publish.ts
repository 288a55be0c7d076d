/**
 * What a skill server publishes for x402 crawlers besides its 402s: `GET /.well-known/x402` (the
 * list of its paid resources, `{ version: 1, resources }`) and an OpenAPI 3.1 document of its paid
 * operations as crawlers read it (x402scan through `@agentcash/discovery`): `info.contact`, agent
 * guidance in `info.x-guidance`, and on each operation `security: []` (no API key) and
 * `x-payment-info` (the USD price and one `x402` protocol entry listing the offers of its 402).
 * Both are advisory: the 402 stays the source of truth.
 */
import { formatPrice } from '../../x402/index';
import { ServeConfigError } from '../errors';
import type { SkillRoute } from '../scheme';
import { embedded } from './bazaar';
import { defaultGuidance, MAX_GUIDANCE_CHARS } from './guidance';
import { SERVER_DESCRIPTION } from './site';

/** @internal Paths where the documents are served (crawlers look for the OpenAPI at both). */
export const WELL_KNOWN_X402 = '/.well-known/x402';
/** @internal */
export const OPENAPI_PATHS = new Set(['/openapi.json', '/.well-known/openapi.json']);

/** How to reach the people behind a skill server (OpenAPI `info.contact`). */
export interface OpenApiContact {
  name?: string;
  email?: string;
  /** An http(s) URL. */
  url?: string;
}

/**
 * The `openapi` option of `serve()` / `createSkillHandler()`: what the OpenAPI document says beyond
 * the skills.
 *
 * @example serve(skills, { openapi: { contact: { email: 'skills@tide.example' } } })
 */
export interface OpenApiOptions {
  /**
   * `info.contact`, for catalogues and agents to reach you (outages, prices); an `email` is what
   * x402scan uses to verify who runs an origin. Default: the server's name and its public URL
   * (`publicUrl`), whose page lists the skills.
   */
  contact?: OpenApiContact;
  /** `info.x-guidance`: how agents call and pay the skills, at most 4000 characters. Default: generated from the offers. */
  guidance?: string;
}

/** The checked `openapi` option. @internal */
export interface OpenApiSettings {
  contact?: OpenApiContact;
  guidance?: string;
}

/** What the document says of the server besides its skills. @internal */
export interface OpenApiMeta {
  title: string;
  serverUrl: string;
  settings: OpenApiSettings;
}

const EMAIL = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/;
const MAX_CONTACT_TEXT = 200;

/**
 * The `openapi` option, checked.
 *
 * @throws ServeConfigError naming the field that is not usable
 * @internal
 */
export function openApiSettings(option: OpenApiOptions | undefined): OpenApiSettings {
  if (option === undefined) return {};
  if (typeof option !== 'object' || option === null) throw new ServeConfigError('openapi must be an object: { contact?, guidance? }');
  const settings: OpenApiSettings = {};
  if (option.guidance !== undefined) {
    const guidance = typeof option.guidance === 'string' ? option.guidance.trim() : '';
    if (guidance === '' || guidance.length > MAX_GUIDANCE_CHARS)
      throw new ServeConfigError(`openapi.guidance must be text of 1 to ${MAX_GUIDANCE_CHARS} characters`);
    settings.guidance = guidance;
  }
  if (option.contact !== undefined) settings.contact = checkedContact(option.contact);
  return settings;
}

function checkedContact(contact: OpenApiContact): OpenApiContact {
  if (typeof contact !== 'object' || contact === null)
    throw new ServeConfigError('openapi.contact must be an object: { name?, email?, url? }');
  const text = (field: keyof OpenApiContact): string | undefined => {
    const value = contact[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_CONTACT_TEXT)
      throw new ServeConfigError(`openapi.contact.${field} must be text of 1 to ${MAX_CONTACT_TEXT} characters`);
    return value.trim();
  };
  const [name, email, url] = [text('name'), text('email'), text('url')];
  if (email !== undefined && !EMAIL.test(email)) throw new ServeConfigError(`openapi.contact.email "${email}" is not an email address`);
  if (url !== undefined && !(URL.canParse(url) && /^https?:$/.test(new URL(url).protocol)))
    throw new ServeConfigError(`openapi.contact.url "${url}" is not an http(s) URL`);
  if (name === undefined && email === undefined && url === undefined)
    throw new ServeConfigError('openapi.contact needs a name, an email or a url');
  return { ...(name ? { name } : {}), ...(email ? { email } : {}), ...(url ? { url } : {}) };
}

/** @internal The `/.well-known/x402` document: every paid resource's URL. */
export function wellKnownX402(routes: Iterable<SkillRoute>): { version: 1; resources: string[] } {
  return { version: 1, resources: [...routes].map((r) => r.terms.paymentRequired.resource.url) };
}

/** @internal The OpenAPI document of the paid operations. */
export function openApiDocument(routes: Iterable<SkillRoute>, meta: OpenApiMeta): Record<string, unknown> {
  const listed = [...routes];
  const paths: Record<string, unknown> = {};
  for (const route of listed) paths[`/${route.name}`] = { post: operation(route) };
  const given = meta.settings.contact;
  // Without an email or a URL, the server's own page, which lists its skills, is the way to it.
  const contact = { name: given?.name ?? meta.title, ...given, ...(given?.email || given?.url ? {} : { url: meta.serverUrl }) };
  return {
    openapi: '3.1.0',
    info: {
      title: meta.title,
      version: '1.0.0',
      description: SERVER_DESCRIPTION,
      contact,
      'x-guidance': meta.settings.guidance ?? defaultGuidance(listed, meta.title),
    },
    servers: [{ url: meta.serverUrl }],
    paths,
  };
}

function operation(route: SkillRoute): Record<string, unknown> {
  const { skill, terms } = route;
  const at = `#/paths/~1${route.name}/post`;
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  const input = skill.inputSchema ? embedded(skill.inputSchema, `${at}/requestBody/content/application~1json/schema`) : {};
  const result = skill.outputSchema
    ? embedded(skill.outputSchema, `${at}/responses/200/content/application~1json/schema/properties/result`)
    : {};
  return {
    operationId: route.name,
    summary: (skill.description ?? route.name).slice(0, 120),
    ...(skill.description ? { description: skill.description } : {}),
    ...(skill.groups.length > 0 ? { tags: [...skill.groups] } : {}),
    // No API key: the payment is the only credential.
    security: [],
    requestBody: { required: true, ...json(input) },
    responses: {
      200: {
        description: 'The result, paid',
        ...json({
          type: 'object',
          properties: { success: { const: true }, result, timestamp: { type: 'string' } },
          required: ['success', 'result'],
        }),
      },
      400: { description: 'Invalid input, refused before any payment is taken' },
      402: {
        description: 'Payment required: the x402 terms in the PAYMENT-REQUIRED header, the input and output schemas in extensions.bazaar',
      },
    },
    'x-payment-info': {
      price: { mode: 'fixed', currency: 'USD', amount: formatPrice(route.amount, terms.asset.decimals) },
      // One entry per protocol (crawlers list each entry as a protocol): every offer of the 402 in it.
      protocols: [
        {
          x402: {
            x402Version: terms.paymentRequired.x402Version,
            accepts: terms.paymentRequired.accepts.map(({ scheme, network, asset, payTo, amount, maxTimeoutSeconds }) => ({
              scheme,
              network,
              asset,
              payTo,
              amount,
              maxTimeoutSeconds,
            })),
          },
        },
      ],
    },
  };
}
