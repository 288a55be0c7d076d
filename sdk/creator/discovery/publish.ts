/**
 * What a skill server publishes for x402 crawlers besides its 402s: `GET /.well-known/x402` (the
 * list of its paid resources, `{ version: 1, resources }`) and an OpenAPI 3.1 document of its paid
 * operations, each carrying `x-payment-info` (the USD price and, per offer, the x402 scheme,
 * network, asset, payTo and amount). Both are advisory: the 402 stays the source of truth.
 */
import { formatPrice } from '../../x402/index';
import type { SkillRoute } from '../scheme';
import { embedded } from './bazaar';

/** @internal Paths where the documents are served (crawlers look for the OpenAPI at both). */
export const WELL_KNOWN_X402 = '/.well-known/x402';
/** @internal */
export const OPENAPI_PATHS = new Set(['/openapi.json', '/.well-known/openapi.json']);

/** @internal The `/.well-known/x402` document: every paid resource's URL. */
export function wellKnownX402(routes: Iterable<SkillRoute>): { version: 1; resources: string[] } {
  return { version: 1, resources: [...routes].map((r) => r.terms.paymentRequired.resource.url) };
}

/** @internal The OpenAPI document of the paid operations at `serverUrl`, titled `title`. */
export function openApiDocument(routes: Iterable<SkillRoute>, serverUrl: string, title: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const route of routes) paths[`/${route.name}`] = { post: operation(route) };
  return { openapi: '3.1.0', info: { title, version: '1.0.0' }, servers: [{ url: serverUrl }], paths };
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
    ...(skill.description ? { summary: skill.description.slice(0, 120), description: skill.description } : {}),
    ...(skill.groups.length > 0 ? { tags: [...skill.groups] } : {}),
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
      400: { description: 'Invalid input, refused before any payment' },
      402: { description: 'Payment required: the x402 terms in the PAYMENT-REQUIRED header' },
    },
    'x-payment-info': {
      price: { mode: 'fixed', currency: 'USD', amount: formatPrice(route.amount, terms.asset.decimals) },
      protocols: terms.paymentRequired.accepts.map(({ scheme, network, asset, payTo, amount, maxTimeoutSeconds }) => ({
        x402: { scheme, network, asset, payTo, amount, maxTimeoutSeconds },
      })),
    },
  };
}
