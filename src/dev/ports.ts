import { createServer } from 'node:net';
import { DevError } from './errors';

export interface PortClaim {
  /** What listens there, as the user knows it: "marketplace", "facilitator", … */
  name: string;
  port: number;
  /** The flag that changes it. */
  flag: string;
}

/** Fails with one line naming the first busy port, its role and its flag, before anything starts. */
export async function checkPortsFree(claims: readonly PortClaim[]): Promise<void> {
  const seen = new Map<number, string>();
  for (const claim of claims) {
    const other = seen.get(claim.port);
    if (other) throw new DevError(`the ${claim.name} and the ${other} cannot share port ${claim.port}: change one with ${claim.flag}`);
    seen.set(claim.port, claim.name);
  }
  for (const claim of claims) {
    if (!(await isFree(claim.port))) {
      throw new DevError(
        `port ${claim.port} (${claim.name}) is already in use: stop what listens there or pass ${claim.flag} <another port>`,
      );
    }
  }
}

/** Whether nothing listens on `port` of 127.0.0.1 now (bound alone, then let go). */
export function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port free on loopback now (the system picks it), for a server started right after. */
export function pickFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
