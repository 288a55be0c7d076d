import { openapi } from '@elysiajs/openapi';
import { Elysia } from 'elysia';
import swaggerPackage from 'swagger-ui-dist/package.json' with { type: 'json' };
import swaggerScript from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' };
import swaggerStyle from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' };
import { WEBHOOK_EVENTS, webhookDelivery } from 'skill-market/registry';
import { VERSION } from '../../version';

/**
 * What the reference page may load: its own script and stylesheet (embedded in the binary, no
 * CDN), the spec from this origin, the inline images its stylesheet carries; never framed.
 */
const DOCS_CONTENT_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The reference's files change only with the package's version, which their path names. */
const ASSETS = `/docs/assets/${swaggerPackage.version}`;

/** Starts the reference on the spec: read-only (no requests sent from the page), no outside validator. */
const START_SCRIPT = `window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#reference', deepLinking: true, supportedSubmitMethods: [], validatorUrl: null });\n`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Skill Market registry API</title>
    <link rel="stylesheet" href="${ASSETS.slice(1)}/swagger-ui.css" />
  </head>
  <body>
    <div id="reference"></div>
    <script src="${ASSETS.slice(1)}/swagger-ui-bundle.js"></script>
    <script src="docs/start.js"></script>
  </body>
</html>
`;

const hidden = { detail: { hide: true } } as const;

/** A schema as the document holds it: plain JSON (TypeBox's symbols left out). */
const plainJson = (schema: object): Record<string, unknown> => JSON.parse(JSON.stringify(schema));

/**
 * The events the registry POSTs to a creator's webhook endpoints (OpenAPI 3.1 `webhooks`): each
 * body's schema, and the Standard Webhooks headers that sign it.
 */
const webhooks = Object.fromEntries(
  WEBHOOK_EVENTS.map((type) => [
    type,
    {
      post: {
        summary: `The ${type} event`,
        description:
          'Signed by the Standard Webhooks convention: verify `webhook-id`, `webhook-timestamp` and `webhook-signature` with the endpoint’s secret (e.g. `new Webhook(secret).verify(body, headers)` of the standardwebhooks package) before trusting the body. Delivered at least once: the same `webhook-id` may arrive again.',
        parameters: ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => ({
          name,
          in: 'header' as const,
          required: true,
          schema: { type: 'string' as const },
        })),
        requestBody: { required: true, content: { 'application/json': { schema: plainJson(webhookDelivery(type)) } } },
        responses: { '200': { description: 'Any 2xx: received. Anything else, or no answer within 5 s, is tried again later.' } },
      },
    },
  ]),
);

/**
 * `/openapi.json` generated from the route schemas, and a reference page at `/docs` (Swagger UI,
 * from the npm package swagger-ui-dist, served from the binary: it works offline and under a
 * strict content policy).
 */
export function docs() {
  const plugin = openapi({
    path: '/docs',
    specPath: '/openapi.json',
    provider: null,
    // Every route, /analytics/revenue.csv too (the generator leaves out paths with a dot unless told).
    exclude: { staticFile: false, paths: ['/docs', '/openapi.json'] },
    documentation: {
      info: {
        title: 'Skill Market registry',
        version: VERSION,
        description: 'Discover, register and analyse paid HTTP skills paid per call with x402.',
      },
      webhooks,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key (sk_… creator, ck_… consumer) or an access token (JWT)' },
          cookie: { type: 'apiKey', in: 'cookie', name: 'market_token', description: 'The access cookie set at sign-in' },
        },
      },
    },
  });
  // The generator lists a request body's content types from the route's named parsers, and
  // request-context's guarded parser is a function, so every body came out as `content: {}`
  // (no schema at all). Bodies are JSON: show the generator a JSON parser instead. (Elysia
  // points a used plugin's getGlobalRoutes at its parent's, so the wrapper is where to look.)
  const wrapper = new Elysia({ name: 'docs' })
    .use(plugin)
    .get(
      '/docs',
      ({ set }) => {
        set.headers['content-security-policy'] = DOCS_CONTENT_POLICY;
        return new Response(PAGE, { headers: { 'content-type': 'text/html;charset=utf-8', 'cache-control': 'no-cache' } });
      },
      hidden,
    )
    .get('/docs/start.js', () => file(START_SCRIPT, 'text/javascript;charset=utf-8', 'no-cache'), hidden)
    .get(`${ASSETS}/swagger-ui-bundle.js`, () => file(Bun.file(swaggerScript), 'text/javascript;charset=utf-8'), hidden)
    .get(`${ASSETS}/swagger-ui.css`, () => file(Bun.file(swaggerStyle), 'text/css;charset=utf-8'), hidden);
  type Routes = { getGlobalRoutes(): { hooks?: { parse?: unknown } }[] };
  (plugin as unknown as Routes).getGlobalRoutes = () =>
    (wrapper as unknown as Routes)
      .getGlobalRoutes()
      .map((route) => (route.hooks?.parse ? { ...route, hooks: { ...route.hooks, parse: [{ fn: 'json' }] } } : route));
  return wrapper;
}

function file(body: string | Blob, type: string, cacheControl = 'public, max-age=31536000, immutable'): Response {
  return new Response(body, { headers: { 'content-type': type, 'cache-control': cacheControl } });
}
