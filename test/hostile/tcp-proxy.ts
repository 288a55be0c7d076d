import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy a test can cut, to make a real server unreachable the way an outage does: `cut()`
 * resets every open connection and stops listening (new connections are refused); `blackhole()`
 * keeps accepting connections but forwards nothing (a partition: packets vanish); `restore()`
 * forwards again on the same port.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  blackhole(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let mode: 'forward' | 'blackhole' = 'forward';
  let port = 0;
  let server: Server;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        open.add(client);
        client.on('close', () => open.delete(client));
        client.on('error', () => client.destroy());
        if (mode === 'blackhole') return client.resume(); // read and drop
        const upstream = createConnection(target);
        open.add(upstream);
        upstream.on('close', () => open.delete(upstream));
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  const resetAll = () => {
    for (const socket of open) socket.resetAndDestroy();
    open.clear();
  };
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return {
    get port() {
      return port;
    },
    async cut() {
      const closed = stop();
      resetAll();
      await closed;
    },
    blackhole() {
      mode = 'blackhole';
      for (const socket of open) {
        socket.unpipe();
        socket.pause();
      }
    },
    async restore() {
      mode = 'forward';
      resetAll();
      if (!server.listening) await listen();
    },
    async close() {
      const stopped = server.listening ? stop() : Promise.resolve();
      resetAll();
      await stopped;
    },
  };
}
