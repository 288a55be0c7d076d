/**
 * A TCP proxy a test can cut, to make a real server (the chain's RPC, PostgreSQL) unreachable the
 * way an outage does: `cut()` resets every open connection and resets new ones at once;
 * `blackhole()` keeps accepting connections but forwards nothing (a partition: packets vanish);
 * `restore()` drops what the outage held and forwards again on the same port.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  url: string;
  port: number;
  /** True while cut. */
  readonly isCut: boolean;
  /** Connections accepted so far (including refused ones). */
  readonly connections: number;
  cut(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let mode: 'forward' | 'cut' | 'blackhole' = 'forward';
  let connections = 0;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const resetAll = () => {
    for (const socket of open) socket.resetAndDestroy();
    open.clear();
  };
  const server = createServer((client) => {
    connections++;
    track(client);
    if (mode === 'cut') return void client.resetAndDestroy();
    if (mode === 'blackhole') return void client.resume(); // read and drop
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
      return mode === 'cut';
    },
    get connections() {
      return connections;
    },
    cut() {
      mode = 'cut';
      resetAll();
    },
    blackhole() {
      mode = 'blackhole';
      for (const socket of open) {
        socket.unpipe();
        socket.pause();
      }
    },
    restore() {
      mode = 'forward';
      resetAll();
    },
    close() {
      resetAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
