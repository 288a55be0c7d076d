/**
 * An HTTP proxy that loses answers the way a network does: it forwards every request whole, waits
 * for the target's whole answer, and for the next `drop(n)` requests that carry a payment proof
 * (or go to a given path) closes the client's connection instead of answering, or holds it open
 * without a word until the client gives up. The target has done its work (verified, run the
 * handler, settled); only the client never hears of it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  path: string;
  /** PAYMENT-SIGNATURE (or X-Payment) of the request; null for none. */
  proof: string | null;
  /** The server's status, or `dropped` when the client got no answer. */
  status: number | 'dropped';
}

export interface AnswerDroppingProxy {
  /** `http://127.0.0.1:<port>`: the target's paths, proxied. */
  url: string;
  requests: ProxiedRequest[];
  /**
   * Loses the answers to the next `count` requests that carry a proof, or that go to `path`:
   * `close` resets the connection, `hold` keeps it open and silent (the client times out).
   */
  drop(count: number, path?: string, how?: 'close' | 'hold'): void;
  close(): Promise<void>;
}

/** Headers that describe one hop's connection, not the message. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'content-encoding']);

export async function startAnswerDroppingProxy(target: string): Promise<AnswerDroppingProxy> {
  const requests: ProxiedRequest[] = [];
  let toDrop = 0;
  let dropPath: string | undefined;
  let dropHow: 'close' | 'hold' = 'close';

  const forward = async (req: IncomingMessage, body: Buffer): Promise<Response> => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return fetch(`${target}${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      body: body.length > 0 ? new Uint8Array(body) : undefined,
    });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const proof = ((req.headers['payment-signature'] ?? req.headers['x-payment']) as string | undefined) ?? null;
      const path = (req.url ?? '/').split('?')[0]!;
      const record: ProxiedRequest = { path, proof, status: 'dropped' };
      requests.push(record);
      try {
        const answer = await forward(req, Buffer.concat(chunks));
        const text = await answer.arrayBuffer();
        if (toDrop > 0 && (dropPath === undefined ? proof !== null : path === dropPath)) {
          toDrop--;
          if (dropHow === 'close') req.socket.destroy();
          return;
        }
        record.status = answer.status;
        const headers: Record<string, string> = {};
        answer.headers.forEach((value, name) => {
          if (!HOP_HEADERS.has(name)) headers[name] = value;
        });
        res.writeHead(answer.status, headers).end(Buffer.from(text));
      } catch (error) {
        record.status = 502;
        res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    drop(count, path, how = 'close') {
      toDrop = count;
      dropPath = path;
      dropHow = how;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
