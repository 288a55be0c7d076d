/**
 * A TCP proxy a test can cut: put it in front of a server (e.g. the chain's RPC) and hand out its
 * URL. `cut()` resets every open connection and refuses new ones (accepted, then reset at once),
 * as a network outage looks to the client; `restore()` lets traffic through again.
 */
import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  url: string;
  port: number;
  /** True while cut. */
  readonly isCut: boolean;
  /** Connections accepted so far (including refused ones). */
  readonly connections: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let cut = false;
  let connections = 0;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    connections++;
    track(client);
    if (cut) return void client.resetAndDestroy();
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the proxy did not get a port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    get isCut() {
      return cut;
    },
    get connections() {
      return connections;
    },
    cut() {
      cut = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    restore() {
      cut = false;
    },
    close() {
      for (const socket of open) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
