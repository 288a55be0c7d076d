/**
 * Our product as `n` instances of each server, side by side, as an operator grows it: `n`
 * registries and `n` facilitators (processes of the compiled binary) on one PostgreSQL database,
 * and `n` instances of one skill server (`market serve` of the echo skill, one payee), each kind
 * behind a round-robin proxy on loopback (test/support/round-robin-proxy.ts, in this process). With
 * n = 1 the proxies are there too, so both sizes pay for the same hops.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey } from 'viem/accounts';
import type { LocalChain } from '../../test/support/chain';
import { type RoundRobinProxy, startRoundRobinProxy } from '../../test/support/round-robin-proxy';
import { freePort, startProcess } from './processes';
import { BINARY, benchFacilitatorEnv, benchRegistryEnv } from './stacks';

export interface Instances {
  /** The proxies' URLs: what clients and the skill servers are given. */
  registryUrl: string;
  slug: string;
  payTo: string;
  proxies: Record<'registry' | 'facilitator' | 'skill server', RoundRobinProxy>;
  /** Process ids by role (every instance of a role counts in its group), for CPU accounting. */
  pids: [role: string, pid: number][];
  stop(): Promise<void>;
}

/** `n` instances of each server on `databaseUrl`, facilitator `i` relaying from `relayerKeys[i]`. */
export async function startInstances(chain: LocalChain, databaseUrl: string, n: number, relayerKeys: string[]): Promise<Instances> {
  const { walletSignIn, createKey, jsonPost, bearer } = await import('../../test/support/auth');
  const { provePayee } = await import('../../test/support/catalogue');
  const stops: (() => Promise<void>)[] = [];
  const pids: [string, number][] = [];
  const proxies = {
    registry: startRoundRobinProxy(),
    facilitator: startRoundRobinProxy(),
    'skill server': startRoundRobinProxy(),
  };
  stops.push(async () => {
    for (const proxy of Object.values(proxies)) proxy.close();
  });
  try {
    const common = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', NODE_ENV: 'production' };
    // One receiver authorizer for every facilitator instance, as docs/operators.md asks.
    const authorizerKey = generatePrivateKey();
    const registries: string[] = [];
    const facilitators: string[] = [];
    for (let i = 0; i < n; i++) {
      const [registryPort, facilitatorPort] = [await freePort(), await freePort()];
      const registry = await startProcess(
        [BINARY, 'registry', '--port', String(registryPort), '--host', '127.0.0.1'],
        { ...common, ...benchRegistryEnv(chain), PUBLIC_URL: proxies.registry.url },
        `http://127.0.0.1:${registryPort}/health`,
      );
      stops.push(registry.stop);
      pids.push(['registry', registry.child.pid!]);
      registries.push(`http://127.0.0.1:${registryPort}`);
      const facilitator = await startProcess(
        [BINARY, 'facilitator', '--port', String(facilitatorPort), '--host', '127.0.0.1'],
        {
          ...common,
          ...benchFacilitatorEnv(chain, relayerKeys[i]!),
          FACILITATOR_AUTHORIZER_KEY: authorizerKey,
        },
        `http://127.0.0.1:${facilitatorPort}/health`,
      );
      stops.push(facilitator.stop);
      pids.push(['facilitator', facilitator.child.pid!]);
      facilitators.push(`http://127.0.0.1:${facilitatorPort}`);
    }
    proxies.registry.setTargets(registries);
    proxies.facilitator.setTargets(facilitators);

    const request = (path: string, init?: RequestInit) => fetch(proxies.registry.url + path, init);
    const creator = await walletSignIn(request);
    const { key } = await createKey(request, creator.token, 'creator');
    await request('/groups', jsonPost({ name: 'bench' }, bearer(key)));
    const payee = await chain.createAccount();
    await provePayee(request, key, payee);

    const servers: string[] = [];
    for (let i = 0; i < n; i++) {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'market-bench-instance-'));
      stops.push(async () => rmSync(dir, { recursive: true, force: true }));
      copyFileSync(join(import.meta.dir, '..', 'fixtures', 'echo-skill.ts'), join(dir, 'skills.ts'));
      const server = await startProcess(
        [
          BINARY,
          'serve',
          'skills.ts',
          '--port',
          String(port),
          '--host',
          '127.0.0.1',
          // Every instance registers, and is reached, at the proxy's address.
          '--endpoint',
          proxies['skill server'].url,
          '--facilitator',
          proxies.facilitator.url,
          '--api-url',
          proxies.registry.url,
          '--network',
          chain.network,
          '--asset',
          chain.token.address,
          '--wallet',
          payee.address,
        ],
        { LOG_LEVEL: 'warn', MARKET_API_KEY: key },
        `http://127.0.0.1:${port}/health`,
        dir,
      );
      stops.push(server.stop);
      pids.push(['skill server', server.child.pid!]);
      servers.push(`http://127.0.0.1:${port}`);
    }
    proxies['skill server'].setTargets(servers);

    let slug: string | undefined;
    for (let i = 0; i < 200 && !slug; i++) {
      const listed = (await (await request('/creators/me/skills', { headers: bearer(key) })).json()) as { slug: string }[];
      slug = listed[0]?.slug;
      if (!slug) await new Promise((r) => setTimeout(r, 50));
    }
    if (!slug) throw new Error('the echo skill did not register');
    return {
      registryUrl: proxies.registry.url,
      slug,
      payTo: payee.address,
      proxies,
      pids,
      stop: async () => {
        for (const stop of stops.reverse()) await stop().catch(() => {});
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    throw error;
  }
}
