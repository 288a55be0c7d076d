/**
 * A load balancer on loopback, as operators put in front of several instances of one server: each
 * HTTP request goes to the next instance in turn (round robin per request, not per connection, so
 * a client's kept-alive connection still reaches every instance). `served[i]` counts the requests
 * instance `i` got. The instances may be set after the proxy listens (its URL is needed first, e.g.
 * as the registry's PUBLIC_URL or the skill servers' registered endpoint).
 *
 * @example
 * const proxy = startRoundRobinProxy();
 * proxy.setTargets([a.url, b.url]); // then send everything to proxy.url
 */
export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  url: string;
  /** Requests each instance got, in the order of `setTargets`. */
  readonly served: readonly number[];
  setTargets(urls: readonly string[]): void;
  close(): void;
}

/** Headers that describe one hop's encoding of the body, not the body: the proxy's fetch decodes it. */
const HOP_HEADERS = ['connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'content-length'];

export function startRoundRobinProxy(urls: readonly string[] = []): RoundRobinProxy {
  let targets = [...urls];
  let served = targets.map(() => 0);
  let next = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 120,
    async fetch(request) {
      if (targets.length === 0) return new Response('no instance behind the proxy yet', { status: 503 });
      const i = next++ % targets.length;
      served[i]! += 1;
      const { pathname, search } = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.delete('host');
      headers.delete('accept-encoding');
      const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
      try {
        const answer = await fetch(`${targets[i]}${pathname}${search}`, {
          method: request.method,
          headers,
          body: hasBody ? await request.arrayBuffer() : undefined,
          redirect: 'manual',
        });
        const out = new Headers(answer.headers);
        for (const name of HOP_HEADERS) out.delete(name);
        return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: out });
      } catch (error) {
        return new Response(`instance ${targets[i]} did not answer: ${(error as Error).message}`, { status: 502 });
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    get served() {
      return served;
    },
    setTargets(list) {
      targets = [...list];
      served = targets.map(() => 0);
      next = 0;
    },
    close: () => void server.stop(true),
  };
}
