/**
 * Puts a fetch-style handler on a port: `Bun.serve` under Bun, `node:http` under Node 20+. The
 * handler itself is runtime-neutral; this is the only runtime-specific file of the creator SDK.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** A listening server. */
export interface Listener {
  port: number;
  hostname: string;
  /** Stops accepting connections, lets running requests finish for up to `graceMs`, then closes the rest. */
  stop(graceMs?: number): Promise<void>;
}

export interface ListenOptions {
  port: number;
  hostname: string;
  /** Largest request body; larger ones are refused by the server itself. */
  maxBodyBytes: number;
  /** Seconds a connection may stay silent (must exceed the longest handler run). */
  idleTimeoutSeconds: number;
}

type FetchHandler = (request: Request, peer?: string) => Promise<Response>;

interface BunLike {
  serve(options: Record<string, unknown>): { port: number; stop(force?: boolean): Promise<void> | void };
}

/** Listens with Bun.serve when running on Bun, otherwise with node:http. */
export function listen(handler: FetchHandler, options: ListenOptions): Promise<Listener> {
  const bun = (globalThis as unknown as { Bun?: BunLike }).Bun;
  return bun ? listenBun(bun, handler, options) : listenNode(handler, options);
}

async function listenBun(bun: BunLike, handler: FetchHandler, options: ListenOptions): Promise<Listener> {
  const server = bun.serve({
    port: options.port,
    hostname: options.hostname,
    fetch: (request: Request, server: { requestIP(request: Request): { address: string } | null }) =>
      handler(request, server.requestIP(request)?.address),
    // The handler refuses bodies over maxBodyBytes itself (by Content-Length, then while reading)
    // with the skill server's JSON error; Bun's own 413 for them would be an empty answer.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Never Bun's error page with the working directory and source lines. (With development off
    // Bun would share a port already in use unless reusePort is said false: keep EADDRINUSE.)
    development: false,
    reusePort: false,
    idleTimeout: Math.min(255, Math.max(10, options.idleTimeoutSeconds)),
  });
  return {
    port: server.port,
    hostname: options.hostname,
    async stop(graceMs = 2000) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const graceful = Promise.resolve(server.stop(false));
      const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([graceful, expired]);
      clearTimeout(timer);
      await server.stop(true);
    },
  };
}

function listenNode(handler: FetchHandler, options: ListenOptions): Promise<Listener> {
  const server = createServer((req, res) => void answer(handler, req, res, options));
  server.requestTimeout = 0; // handlers have their own deadlines
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.hostname, () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      resolve({
        port,
        hostname: options.hostname,
        stop: (graceMs = 2000) =>
          new Promise<void>((done) => {
            const timer = setTimeout(() => server.closeAllConnections(), graceMs);
            server.close(() => {
              clearTimeout(timer);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}

async function answer(handler: FetchHandler, req: IncomingMessage, res: ServerResponse, options: ListenOptions): Promise<void> {
  try {
    const body = await collect(req, options.maxBodyBytes);
    if (body === 'too-large') {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
      res.end(
        JSON.stringify({
          success: false,
          error: `Request body larger than ${options.maxBodyBytes} bytes`,
          timestamp: new Date().toISOString(),
        }),
      );
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, value);
    }
    const host = req.headers.host ?? `${options.hostname}:${options.port}`;
    const method = req.method ?? 'GET';
    const request = new Request(`http://${host}${req.url ?? '/'}`, {
      method,
      headers,
      ...(method === 'GET' || method === 'HEAD' || body.length === 0 ? {} : { body }),
    });
    const response = await handler(request, req.socket.remoteAddress);
    const out: Record<string, string | string[]> = {};
    response.headers.forEach((value, name) => {
      out[name] = name === 'set-cookie' ? response.headers.getSetCookie() : value;
    });
    const payload = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, out);
    res.end(method === 'HEAD' ? undefined : payload);
  } catch {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ success: false, error: 'Internal server error', timestamp: new Date().toISOString() }));
  }
}

function collect(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume(); // discard the rest; the answer closes the connection
      resolve('too-large');
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
