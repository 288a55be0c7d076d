/**
 * compose.yaml, checked without Docker (not on this machine): parsed, its variables filled in as
 * `docker compose` would, and the services it builds from this repository started from the
 * binary with exactly their command and environment (the container's ports mapped to free ones,
 * the `postgres` service's address to the test PostgreSQL), until each one's own health check
 * command passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadFacilitatorConfig, loadRegistryConfig } from '../../src/config';
import { ensureBinary } from '../support/binary';
import { type LocalChain, startChain } from '../support/chain';
import { createPostgresDatabase, TEST_DATABASE_URL } from '../support/database';
import { lastReading } from '../support/eventually';
import { freePort, inheritedEnv } from '../support/process';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const text = readFileSync(join(import.meta.dir, '../../compose.yaml'), 'utf8');

/** `${VAR}`, `${VAR:-default}` and `${VAR:?message}` as compose fills them in. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}/g, (_, name: string, op: string | undefined, arg: string | undefined) => {
    const set = env[name];
    if (set !== undefined && set !== '') return set;
    if (op === ':?') throw new Error(`compose refuses to start: ${name} ${arg}`);
    return op === ':-' ? (arg ?? '') : '';
  });
}

const compose = Bun.YAML.parse(text) as Compose;

describe('compose.yaml', () => {
  it('runs PostgreSQL with a volume and a health check, and starts the registry and the facilitator after it is healthy', () => {
    const { postgres, registry, facilitator } = compose.services;
    expect(postgres?.image).toMatch(/^postgres:\d+/);
    expect(postgres?.healthcheck?.test).toContain('pg_isready');
    expect(postgres?.volumes?.[0]).toMatch(/^postgres-data:/);
    expect(Object.keys(compose.volumes ?? {})).toContain('postgres-data');
    for (const service of [registry, facilitator]) {
      expect(service?.build).toBe('.');
      expect(service?.depends_on?.postgres?.condition).toBe('service_healthy');
      expect(service?.healthcheck?.test.slice(0, 2)).toEqual(['CMD', 'market']);
    }
  });

  it('passes the payment-channel settings through: MARKET_CHANNELS_FROM_BLOCK to the registry, the receiver authorizer and bound keys to the facilitator', () => {
    const { registry, facilitator } = compose.services;
    const required = {
      POSTGRES_PASSWORD: 'a-password',
      PUBLIC_URL: 'https://market.example.com',
      AUTH_JWT_SECRET: 'a-session-secret-of-at-least-32-characters',
      FACILITATOR_PRIVATE_KEY: generatePrivateKey(),
    };
    const configs = (env: Record<string, string>) => {
      const filled = (service: Service | undefined) =>
        Object.fromEntries(Object.entries(service?.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), env)]));
      return { registry: loadRegistryConfig(filled(registry), '/'), facilitator: loadFacilitatorConfig(filled(facilitator), '/') };
    };
    const unset = configs(required);
    expect(unset.registry.chain.channelsFromBlock).toBe(0n);
    expect(unset.facilitator.receiverKeys).toEqual([]);
    expect(unset.facilitator.authorizerPrivateKey).toBeUndefined();
    expect(unset.facilitator.open).toBe(false); // production: claims need the receiver's key

    const authorizer = generatePrivateKey();
    const payout = privateKeyToAccount(generatePrivateKey()).address;
    const set = configs({
      ...required,
      MARKET_CHANNELS_FROM_BLOCK: '25300000',
      FACILITATOR_AUTHORIZER_KEY: authorizer,
      FACILITATOR_RECEIVER_KEYS: `${payout}=a-key-bound-to-the-payout-address`,
      FACILITATOR_OPEN: 'true',
    });
    expect(set.registry.chain.channelsFromBlock).toBe(25_300_000n);
    expect(set.facilitator.authorizerPrivateKey).toBe(authorizer);
    expect(set.facilitator.receiverKeys).toEqual([{ receiver: payout, key: 'a-key-bound-to-the-payout-address' }]);
    expect(set.facilitator.open).toBe(true);
  });

  it('refuses to start without the secrets it needs', () => {
    const environment = compose.services.registry?.environment ?? {};
    expect(() => Object.values(environment).map((v) => interpolate(String(v), {}))).toThrow(/POSTGRES_PASSWORD|PUBLIC_URL|AUTH_JWT_SECRET/);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('the services compose.yaml builds, started from the binary as it names them', () => {
  let chain: LocalChain;
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  const running: ReturnType<typeof Bun.spawn>[] = [];

  beforeAll(async () => {
    await ensureBinary();
    chain = await startChain({ relayers: 1 });
    database = await createPostgresDatabase();
  }, 240_000);

  afterAll(async () => {
    for (const child of running) child.kill('SIGTERM');
    await Promise.all(running.map((c) => c.exited));
    await chain?.stop();
    await database?.drop();
  });

  it('registry and facilitator pass their own health checks', async () => {
    const env = {
      POSTGRES_PASSWORD: 'unused-here',
      PUBLIC_URL: 'https://market.example.com',
      AUTH_JWT_SECRET: 'a-session-secret-of-at-least-32-characters',
      FACILITATOR_PRIVATE_KEY: generatePrivateKey(),
      MARKET_NETWORK: chain.network,
      MARKET_RPC_URL: chain.rpcUrl,
    };
    const hostPorts: Record<string, number> = {};
    for (const name of ['registry', 'facilitator']) hostPorts[name] = await freePort();
    /** A container address, as the host reaches it here. */
    const mapped = (value: string) =>
      value
        .replace(/postgres:\/\/[^@]+@postgres:5432\/market/, database.url)
        .replace(/\/\/(registry|facilitator):(\d+)/g, (_, host: string) => `//127.0.0.1:${hostPorts[host]}`);
    const { path } = await ensureBinary();
    const checks: { name: string; test: string[] }[] = [];
    for (const name of ['facilitator', 'registry']) {
      const service = compose.services[name]!;
      const containerPort = String(service.ports?.[0]?.split(':')[1]);
      const portOf = (s: string) => s.replace(new RegExp(`\\b${containerPort}\\b`), String(hostPorts[name]));
      const environment = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([k, v]) => [k, mapped(interpolate(String(v), env))]),
      );
      if (environment.PORT) environment.PORT = portOf(environment.PORT);
      const command = (service.command ?? []).map((arg) => portOf(arg));
      running.push(
        Bun.spawn([path, ...command], {
          env: { ...inheritedEnv(), HOME: '/tmp', ...environment, HOST: '127.0.0.1' },
          stdout: 'ignore',
          stderr: 'pipe',
        }),
      );
      checks.push({ name, test: service.healthcheck!.test.slice(2).map((arg) => portOf(arg)) });
    }
    for (const check of checks) {
      const healthcheck = async () => {
        const run = Bun.spawn([path, ...check.test], { stdout: 'pipe', stderr: 'pipe' });
        const [code, output] = await Promise.all([run.exited, new Response(run.stderr).text()]);
        return { code, output };
      };
      const { code, output } = await lastReading(healthcheck, (run) => run.code === 0, 30_000);
      expect({ service: check.name, code, output: code === 0 ? '' : output }).toEqual({ service: check.name, code: 0, output: '' });
    }
  }, 120_000);
});
