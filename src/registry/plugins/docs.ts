import { openapi } from '@elysiajs/openapi';
import { Elysia } from 'elysia';
import { VERSION } from '../../version';

/** `/openapi.json` generated from the route schemas, and a reference page at `/docs`. */
export function docs() {
  const plugin = openapi({
    path: '/docs',
    specPath: '/openapi.json',
    exclude: { paths: ['/docs', '/openapi.json'] },
    documentation: {
      info: {
        title: 'Skill Market registry',
        version: VERSION,
        description: 'Discover, register and analyse paid HTTP skills paid per call with x402.',
      },
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
  const wrapper = new Elysia({ name: 'docs' }).use(plugin);
  type Routes = { getGlobalRoutes(): { hooks?: { parse?: unknown } }[] };
  (plugin as unknown as Routes).getGlobalRoutes = () =>
    (wrapper as unknown as Routes)
      .getGlobalRoutes()
      .map((route) => (route.hooks?.parse ? { ...route, hooks: { ...route.hooks, parse: [{ fn: 'json' }] } } : route));
  return wrapper;
}
