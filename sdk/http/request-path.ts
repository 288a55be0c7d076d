/**
 * The path of a request, also when the client sent no usable Host header: Bun then hands over a
 * bare path (`/health`, HTTP/1.0 without Host) or an absolute URL that does not parse
 * (`Host: [::`), on which `new URL(request.url)` throws. Splits the way Elysia's router does, so
 * logs, limits and routing agree on the path.
 *
 * @example
 * requestPath('http://localhost:8080/health?full=1'); // '/health'
 * requestPath('/health'); // '/health' (HTTP/1.0 without Host)
 */
export function requestPath(url: string): string {
  const start = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('://') + 3);
  if (start < 0) return '/';
  const end = url.indexOf('?', start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

/**
 * The path and query of a request (`/skills?q=x`), with the same care as requestPath.
 *
 * @example
 * requestPathAndQuery('http://localhost:8080/skills?q=translate'); // '/skills?q=translate'
 */
export function requestPathAndQuery(url: string): string {
  const start = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('://') + 3);
  return start < 0 ? '/' : url.slice(start);
}
