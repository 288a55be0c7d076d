/**
 * Cross-origin access to the skill server, so a web page can pay and call a skill from the
 * browser: preflights answered, and the x402 headers exposed to page scripts (a browser hides
 * every response header not listed in Access-Control-Expose-Headers, PAYMENT-REQUIRED included).
 * Skills are public paid APIs that carry no cookies, so any origin is allowed by default.
 */
import { ServeConfigError } from './errors';
import { EXPOSED_HEADERS } from './http';

/**
 * The `cors` option of `serve()` / `createSkillHandler()`:
 * - `true` (default): any origin (`Access-Control-Allow-Origin: *`);
 * - `{ origins: ['https://app.example'] }`: only these origins (the matching one is echoed, with
 *   `Vary: Origin`; a page from any other origin gets no allow header, so its browser blocks it);
 * - `false`: no CORS headers at all (same-origin pages and non-browser clients only).
 */
export type CorsOption = boolean | { origins: readonly string[] };

export { EXPOSED_HEADERS };

/** What a preflight allows: a JSON body and either x402 proof header. */
const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Methods': 'POST, GET, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, X-Payment, PAYMENT-SIGNATURE, SIGN-IN-WITH-X',
  'Access-Control-Max-Age': '600',
});

export interface CorsPolicy {
  /** The answer to an OPTIONS request (204). */
  preflight(request: Request): Response;
  /** Adds the CORS headers for this request's Origin to a response. */
  apply(request: Request, response: Response): Response;
}

/**
 * Builds the policy once from the option.
 *
 * @throws ServeConfigError for `origins` that are not a non-empty list of `http(s)://host[:port]` origins
 */
export function corsPolicy(option: CorsOption = true): CorsPolicy {
  const allowOrigin = originMatcher(option);
  const restricted = typeof option === 'object';
  const headersFor = (request: Request, preflight: boolean): Record<string, string> => {
    const headers: Record<string, string> = restricted ? { Vary: 'Origin' } : {};
    const origin = allowOrigin(request.headers.get('origin'));
    if (origin === undefined) return headers;
    return {
      ...headers,
      'Access-Control-Allow-Origin': origin,
      ...(preflight ? PREFLIGHT_HEADERS : { 'Access-Control-Expose-Headers': EXPOSED_HEADERS }),
    };
  };
  return {
    preflight: (request) => new Response(null, { status: 204, headers: { 'Cache-Control': 'no-store', ...headersFor(request, true) } }),
    apply(request, response) {
      const extra = Object.entries(headersFor(request, false));
      if (extra.length === 0) return response;
      const add = (target: Response) => {
        for (const [name, value] of extra) target.headers[name === 'Vary' ? 'append' : 'set'](name, value);
        return target;
      };
      try {
        return add(response);
      } catch {
        // Responses made by fetch() or Response.error() have immutable headers: answer a copy.
        return add(new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers }));
      }
    },
  };
}

/** The Access-Control-Allow-Origin value for a request's Origin header, or undefined for none. */
function originMatcher(option: CorsOption): (origin: string | null) => string | undefined {
  if (option === false) return () => undefined;
  if (option === true) return () => '*';
  const list = option?.origins;
  if (!Array.isArray(list) || list.length === 0)
    throw new ServeConfigError('cors.origins must list at least one origin, e.g. ["https://app.example"]');
  const allowed = new Set(list.map(checkedOrigin));
  return (origin) => (origin !== null && allowed.has(origin) ? origin : undefined);
}

function checkedOrigin(value: unknown): string {
  const text = typeof value === 'string' ? value.trim() : '';
  const url = URL.canParse(text) ? new URL(text) : undefined;
  const bare = url && url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
  if (!url || !bare || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ServeConfigError(
      `cors.origins: "${String(value).slice(0, 80)}" is not an origin such as https://app.example (scheme, host and port only)`,
    );
  }
  return url.origin;
}
