/**
 * The same MCP server over Streamable HTTP, on its own port (loopback by default). Stateless: each
 * POST gets a fresh server and transport (the budget and the SDK client are shared, so limits hold
 * across requests). Beyond loopback a bearer token is required (checked in constant time).
 */
import { timingSafeEqual } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
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

function json(status: number, body: Record<string, unknown>): Response {
  return Response.json({ ...body, requestId: crypto.randomUUID() }, { status });
}
