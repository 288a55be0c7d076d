import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalChain } from '../../test/support/chain';
import { freePort, startProcess } from './processes';

const ROOT = join(import.meta.dir, '..', '..');
export const BINARY = join(ROOT, 'dist/market');

/**
 * The command of our processes: the compiled binary, or with BENCH_PROFILE_DIR set the sources
 * under Bun's CPU profiler, one markdown profile per process written there on exit (with
 * BENCH_PROFILE_JSON set, a `.cpuprofile` sampled every 0.1 ms instead: count its samples, as the
 * markdown's self times count idle time too).
 */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
const market = (...args: string[]) =>
  PROFILE_DIR
    ? [
        'bun',
        ...(process.env.BENCH_PROFILE_JSON ? ['--cpu-prof', '--cpu-prof-interval=100'] : ['--cpu-prof-md']),
        `--cpu-prof-dir=${PROFILE_DIR}`,
        `--cpu-prof-name=${args[0]}-${Date.now()}.${process.env.BENCH_PROFILE_JSON ? 'cpuprofile' : 'md'}`,
        join(ROOT, 'src/cli/main.ts'),
        ...args,
      ]
    : [BINARY, ...args];

export interface OurStack {
  registryUrl: string;
  facilitatorUrl: string;
  skillUrl: string;
  slug: string;
  payTo: string;
  /** Process ids by role, for CPU accounting. */
  pids: Record<'registry' | 'facilitator' | 'skill server', number>;
  stop(): Promise<void>;
}

type Request = (path: string, init?: RequestInit) => Promise<Response>;

/** A bench registry's settings on `chain`: http endpoints allowed, rate limits off. */
export function benchRegistryEnv(chain: LocalChain): Record<string, string> {
  return {
    AUTH_JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
    MARKET_ALLOW_HTTP_ENDPOINTS: 'true',
    MARKET_NETWORK: chain.network,
    MARKET_USDC_ADDRESS: chain.token.address,
    MARKET_RPC_URL: chain.rpcUrl,
    RATE_LIMIT_AUTH: 'off',
    RATE_LIMIT_WRITE: 'off',
    RATE_LIMIT_READ: 'off',
  };
}

/** A bench facilitator's settings on `chain`, sending from `relayerKeys` (comma-separated). */
export function benchFacilitatorEnv(chain: LocalChain, relayerKeys: string): Record<string, string> {
  return {
    FACILITATOR_PRIVATE_KEY: relayerKeys,
    FACILITATOR_RPC_URL: chain.rpcUrl,
    FACILITATOR_NETWORK: chain.network,
    FACILITATOR_ASSETS: chain.token.address,
    FACILITATOR_POLL_INTERVAL_MS: '20',
  };
}

/**
 * Our product as separate processes of the compiled binary: registry and facilitator on
 * PostgreSQL, and `market serve` of the echo skill in a settlement mode, auto-registered with a
 * creator key.
 */
export async function startOurStack(
  chain: LocalChain,
  databaseUrl: string,
  relayerKeys: string[],
  settlement: 'broadcast' | 'confirmed',
  facilitatorEnv: Record<string, string> = {},
  serveArgs: string[] = [],
): Promise<OurStack> {
  const { walletSignIn, createKey, jsonPost, bearer } = await import('../../test/support/auth');
  const { provePayee } = await import('../../test/support/catalogue');
  const stops: (() => Promise<void>)[] = [];
  const [registryPort, facilitatorPort, skillPort] = [await freePort(), await freePort(), await freePort()];
  const common = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', NODE_ENV: 'production' };
  // A skill is only paid to an address its creator has proven, and a closed facilitator (production's
  // default) claims channels for a receiver that presents the key bound to it, as a creator goes live.
  const payee = await chain.createAccount();
  const receiverKey = `bench-receiver-${payee.address.slice(2, 18)}`;
  const registry = await startProcess(
    market('registry', '--port', String(registryPort), '--host', '127.0.0.1'),
    { ...common, ...benchRegistryEnv(chain) },
    `http://127.0.0.1:${registryPort}/health`,
  );
  stops.push(registry.stop);
  const facilitator = await startProcess(
    market('facilitator', '--port', String(facilitatorPort), '--host', '127.0.0.1'),
    {
      ...common,
      ...benchFacilitatorEnv(chain, relayerKeys.join(',')),
      FACILITATOR_RECEIVER_KEYS: `${payee.address}=${receiverKey}`,
      ...facilitatorEnv,
    },
    `http://127.0.0.1:${facilitatorPort}/health`,
  );
  stops.push(facilitator.stop);

  const registryUrl = `http://127.0.0.1:${registryPort}`;
  const request: Request = (path, init) => fetch(registryUrl + path, init);
  const creator = await walletSignIn(request);
  const { key } = await createKey(request, creator.token, 'creator');
  await request('/groups', jsonPost({ name: 'bench' }, bearer(key)));
  await provePayee(request, key, payee);
  const payTo = payee.address;
  const dir = mkdtempSync(join(tmpdir(), 'market-bench-skill-'));
  // Removed after the skill server has stopped (stops run in reverse).
  stops.push(async () => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(join(import.meta.dir, '..', 'fixtures', 'echo-skill.ts'), join(dir, 'skills.ts'));
  const skillUrl = `http://127.0.0.1:${skillPort}`;
  const server = await startProcess(
    [
      ...market(
        'serve',
        'skills.ts',
        '--port',
        String(skillPort),
        '--host',
        '127.0.0.1',
        '--endpoint',
        skillUrl,
        '--facilitator',
        `http://127.0.0.1:${facilitatorPort}`,
        '--api-url',
        registryUrl,
        '--network',
        chain.network,
        '--asset',
        chain.token.address,
        '--wallet',
        payTo,
        '--settlement',
        settlement,
        ...serveArgs,
      ),
    ],
    { LOG_LEVEL: 'warn', MARKET_API_KEY: key, MARKET_FACILITATOR_API_KEY: receiverKey },
    `${skillUrl}/health`,
    dir,
  );
  stops.push(server.stop);
  let slug: string | undefined;
  for (let i = 0; i < 200 && !slug; i++) {
    const listed = (await (await request('/creators/me/skills', { headers: bearer(key) })).json()) as { slug: string }[];
    slug = listed[0]?.slug;
    if (!slug) await new Promise((r) => setTimeout(r, 50));
  }
  if (!slug) throw new Error('the echo skill did not register');
  return {
    registryUrl,
    facilitatorUrl: `http://127.0.0.1:${facilitatorPort}`,
    skillUrl: `${skillUrl}/echo`,
    slug,
    payTo,
    pids: { registry: registry.child.pid!, facilitator: facilitator.child.pid!, 'skill server': server.child.pid! },
    stop: async () => {
      for (const stop of stops.reverse()) await stop().catch(() => {});
    },
  };
}

/**
 * A reference stack (a script of bench/reference) in its own process on `chain`, relaying from
 * `relayerKey` and paid `AMOUNT` (the bench price) to a fresh payee; resolves with the URLs it prints.
 */
async function spawnReference<Urls>(script: string, chain: LocalChain, relayerKey: string, env: Record<string, string>) {
  const payTo = (await chain.createAccount()).address;
  const child = spawn('bun', [join(import.meta.dir, '..', 'reference', script)], {
    env: {
      ...process.env,
      RPC_URL: chain.rpcUrl,
      CHAIN_ID: String(chain.chainId),
      TOKEN: chain.token.address,
      RELAYER_KEY: relayerKey,
      PAY_TO: payTo,
      AMOUNT: '1000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const urls = await new Promise<Urls>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(JSON.parse(String(d))));
    child.once('exit', (code) => reject(new Error(`reference stack ${script} exited ${code}`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    urls,
    payTo,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The x402 reference stack (bench/reference/stack.ts) in its own process. */
export async function startReferenceStack(
  chain: LocalChain,
  relayerKey: string,
  nonceManager: boolean,
): Promise<{ resourceUrl: string; payTo: string; pid: number; stop(): Promise<void> }> {
  const { urls, ...stack } = await spawnReference<{ resourceUrl: string }>('stack.ts', chain, relayerKey, {
    REFERENCE_NONCE_MANAGER: nonceManager ? 'on' : 'off',
  });
  return { resourceUrl: urls.resourceUrl, ...stack };
}

/** The x402 reference batch-settlement stack (bench/reference/batch-stack.ts) in its own process; `claimAndSettle` runs its channel manager. */
export async function startBatchReferenceStack(chain: LocalChain, relayerKey: string) {
  const authorizer = await chain.createAccount();
  const { urls, ...stack } = await spawnReference<{ resourceUrl: string; controlUrl: string }>('batch-stack.ts', chain, relayerKey, {
    AUTHORIZER_KEY: authorizer.privateKey,
  });
  return {
    ...urls,
    ...stack,
    claimAndSettle: async () => {
      const res = await fetch(urls.controlUrl, { method: 'POST' });
      if (!res.ok) throw new Error(`batch reference claim and settle: ${res.status} ${await res.text()}`);
    },
  };
}
