/**
 * The same MCP server over Streamable HTTP, on its own port (loopback by default). Stateless: each
 * POST gets a fresh server and transport (the budget and the SDK client are shared, so limits hold
 * across requests). Beyond loopback a bearer token is required (checked in constant time). On
 * loopback without a token, the Host and Origin headers must be loopback ones: otherwise any web
 * page could reach the port through DNS rebinding and spend the wallet.
 */
import { timingSafeEqual } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isLoopback } from './config';
import { createMcpServer, type ServerDeps } from './server';

export const MCP_PATH = '/mcp';

export function serveMcpOverHttp(deps: ServerDeps, settings: { host: string; port: number; token: string | undefined }) {
  return Bun.serve({
    hostname: settings.host,
    port: settings.port,
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== MCP_PATH) return json(404, { error: `Not found: the MCP endpoint is ${MCP_PATH}`, code: 'NOT_FOUND' });
      if (settings.token !== undefined && !authorized(request.headers.get('authorization'), settings.token)) {
        return json(401, { error: 'A bearer token is required (MARKET_MCP_TOKEN)', code: 'UNAUTHORIZED' });
      }
      if (settings.token === undefined && !fromLoopback(request)) {
        return json(403, { error: 'Only loopback Host and Origin are served without MARKET_MCP_TOKEN', code: 'FORBIDDEN' });
      }
      if (request.method !== 'POST') return json(405, { error: 'This stateless MCP endpoint takes POST only', code: 'METHOD_NOT_ALLOWED' });
      const server = createMcpServer(deps);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      try {
        return await transport.handleRequest(request);
      } finally {
        void server.close();
      }
    },
  });
}

function authorized(header: string | null, token: string): boolean {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function fromLoopback(request: Request): boolean {
  const host = request.headers.get('host');
  const origin = request.headers.get('origin');
  const hostOk = host !== null && isLoopback(hostname(host));
  const originOk = origin === null || (URL.canParse(origin) && isLoopback(new URL(origin).hostname.replace(/^\[|\]$/g, '')));
  return hostOk && originOk;
}

/** `host[:port]`, `[v6]:port` → the host name. */
function hostname(hostHeader: string): string {
  const v6 = /^\[([^\]]+)\]/.exec(hostHeader);
  return v6 ? v6[1]! : hostHeader.replace(/:\d+$/, '');
}

function json(status: number, body: Record<string, unknown>): Response {
  return Response.json({ ...body, requestId: crypto.randomUUID() }, { status });
}
