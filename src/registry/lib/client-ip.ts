import type { Server } from 'bun';
import { clientAddress, plainAddress } from 'skill-market/http';

/**
 * The client's IP address. The socket peer, unless the peer is a trusted proxy: then the
 * rightmost X-Forwarded-For entry that is not itself a trusted proxy. A request handled in
 * process (tests, no socket) counts as coming from 127.0.0.1.
 */
export function clientIp(request: Request, server: Server<unknown> | null, trustedProxies: readonly string[]): string {
  return clientAddress(peerIp(request, server), request.headers.get('x-forwarded-for'), trustedProxies);
}

/** The socket peer's address (a proxy's, behind one); 127.0.0.1 for a request handled in process. */
export function peerIp(request: Request, server: Server<unknown> | null): string {
  return plainAddress(server?.requestIP(request)?.address ?? '127.0.0.1');
}
