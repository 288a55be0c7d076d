import { openapi } from '@elysiajs/openapi';
import { VERSION } from '../../version';

/** `/openapi.json` generated from the route schemas, and a reference page at `/docs`. */
export function docs() {
  return openapi({
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
}
