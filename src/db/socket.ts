/**
 * The TCP connection of each PostgreSQL client, opened here for postgres.js (its `socket` option).
 * postgres.js drops every listener of a socket once the socket closes, and Bun can still report a
 * reset on it after its `close` (`read ECONNRESET` from the close path, seen when PostgreSQL or a
 * proxy resets connections). An `error` event without a listener ends the process; these sockets
 * keep one that takes such late errors, so a database reset is an unavailable database (503s, then
 * reconnects), never a crashed server. Connecting is bounded by the same deadline postgres.js
 * would apply.
 */
import { connect, type Socket } from 'node:net';

/** What postgres.js passes to its `socket` option: its parsed hosts and ports (one here), or a Unix socket path. */
interface SocketOptions {
  host: string[];
  port: number[];
  path?: string | false;
}

/** A connected socket to the first host, failing after `timeoutMs`. */
export function connectGuarded(options: SocketOptions, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const host = options.host[0] ?? 'localhost';
    const socket = options.path ? connect(options.path) : connect(options.port[0] ?? 5432, host);
    // postgres.js names the TLS server by it when it upgrades the connection.
    Object.assign(socket, { host });
    const late = () => {};
    // postgres.js removes all listeners when it lets the socket go: the sink comes back each time.
    const removeAll = socket.removeAllListeners.bind(socket);
    socket.removeAllListeners = ((event?: string | symbol) => {
      removeAll(event as string);
      if (event === undefined || event === 'error') socket.on('error', late);
      return socket;
    }) as Socket['removeAllListeners'];
    socket.on('error', late);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(Object.assign(new Error(`connecting to PostgreSQL took longer than ${timeoutMs} ms`), { code: 'CONNECT_TIMEOUT' }));
    }, timeoutMs);
    const failed = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', failed);
      resolve(socket);
    });
  });
}
