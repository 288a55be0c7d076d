/**
 * Registry benchmarks on PostgreSQL with 10,000 skills, side by side with a ceiling (bare
 * Elysia + postgres.js, one indexed query): GET /skills/:slug, GET /skills?q=, POST
 * /analytics/view with deduplication, and startup of the binary to first /health on PostgreSQL
 * and on the embedded database.   npx bun bench/registry.ts   (BENCH_SECONDS=10 by default)
 */
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { runLoad, type LoadResult } from './lib/load';
import { freePort, startProcess } from './lib/processes';
import { fmt, printTable, saveSection } from './lib/results';
import { seed, SKILLS, WORDS } from './lib/catalogue';

const ROOT = join(import.meta.dir, '..');
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;
async function main() {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const name = `market_bench_${Date.now().toString(36)}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const stops: (() => Promise<void>)[] = [];
  try {
    await seed(databaseUrl);
    const [registryPort, ceilingPort] = [await freePort(), await freePort()];
    const registry = await startProcess(
      ['bun', join(ROOT, 'src/cli/main.ts'), 'registry', '--port', String(registryPort), '--host', '127.0.0.1'],
      {
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_READ: 'off',
        RATE_LIMIT_WRITE: 'off',
        TRUSTED_PROXIES: '127.0.0.1',
        NODE_ENV: 'production',
        AUTH_JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
        MARKET_RPC_URL: 'http://127.0.0.1:9',
      },
      `http://127.0.0.1:${registryPort}/health`,
    );
    stops.push(registry.stop);
    const ceiling = await startProcess(
      ['bun', join(import.meta.dir, 'ceiling-server.ts')],
      { DATABASE_URL: databaseUrl, PORT: String(ceilingPort) },
      `http://127.0.0.1:${ceilingPort}/health`,
    );
    stops.push(ceiling.stop);

    const slugPaths = (prefix: string) => Array.from({ length: 1000 }, (_, i) => `${prefix}/skills/skill-${1 + ((i * 7919) % SKILLS)}`);
    const searchPaths = (path: (w: string) => string) => WORDS.map(path);
    const load = (base: string, extra: Partial<Parameters<typeof runLoad>[0]>) =>
      runLoad({ url: base, connections: CONNECTIONS, duration: SECONDS, ...extra });
    const ours = `http://127.0.0.1:${registryPort}`;
    const bare = `http://127.0.0.1:${ceilingPort}`;

    const rows: Record<string, { ours: LoadResult; ceiling?: LoadResult }> = {};
    rows['GET /skills/:slug'] = { ours: await load(ours, { paths: slugPaths('') }), ceiling: await load(bare, { paths: slugPaths('') }) };
    rows['GET /skills?q='] = {
      ours: await load(ours, { paths: searchPaths((w) => `/skills?q=${w}`) }),
      ceiling: await load(bare, { paths: searchPaths((w) => `/search?q=${w}`) }),
    };
    const skillId = ((await (await fetch(`${ours}/skills/skill-42`)).json()) as { id: string }).id;
    const viewBody = JSON.stringify({ skillId });
    const headers = { 'content-type': 'application/json' };
    rows['POST /analytics/view (new visitor each)'] = {
      ours: await load(ours, { method: 'POST', body: viewBody, headers, forwardedFor: true, paths: ['/analytics/view'] }),
    };
    rows['POST /analytics/view (one visitor, deduplicated)'] = {
      ours: await load(ours, { method: 'POST', body: viewBody, headers, paths: ['/analytics/view'] }),
    };
    const counted = ((await (await fetch(`${ours}/analytics/${skillId}`)).json()) as { viewCount: number }).viewCount;

    await registry.stop();
    stops.splice(stops.indexOf(registry.stop), 1);
    const startup = await measureStartup(databaseUrl);

    printTable(
      `Registry on PostgreSQL, ${SKILLS.toLocaleString()} skills, ${CONNECTIONS} connections, ${SECONDS} s each (load generator on the same machine)`,
      ['endpoint', 'ours req/s', 'ours p99 ms', 'ceiling req/s', 'ceiling p99 ms', 'ours / ceiling', 'non-2xx'],
      Object.entries(rows).map(([label, { ours: o, ceiling: c }]) => [
        label,
        fmt(o.requestsPerSecond),
        fmt(o.p99, 1),
        c ? fmt(c.requestsPerSecond) : '-',
        c ? fmt(c.p99, 1) : '-',
        c ? fmt(o.requestsPerSecond / c.requestsPerSecond, 2) : '-',
        o.non2xx,
      ]),
    );
    console.log(
      `views counted: ${counted} (new-visitor requests completed: ${rows['POST /analytics/view (new visitor each)']!.ours.total}, plus requests in flight at the end, plus 1 deduplicated visitor)`,
    );
    printTable(
      'Startup of dist/market to first /health',
      ['database', 'ms (median of 3)'],
      Object.entries(startup).map(([k, v]) => [k, fmt(v)]),
    );
    saveSection('registry', {
      skills: SKILLS,
      connections: CONNECTIONS,
      seconds: SECONDS,
      endpoints: rows,
      viewsCounted: counted,
      startupMs: startup,
    });
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

/** Median time from spawn to the first 200 from /health, three runs each. */
async function measureStartup(databaseUrl: string): Promise<Record<string, number>> {
  const binary = join(ROOT, 'dist/market');
  if (!existsSync(binary)) throw new Error('dist/market is missing: run npm run build first');
  const dir = mkdtempSync(join(tmpdir(), 'market-bench-'));
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const once = async (env: Record<string, string>) => {
    const port = await freePort();
    const p = await startProcess(
      [binary, 'registry', '--port', String(port), '--host', '127.0.0.1'],
      { LOG_LEVEL: 'warn', ...env },
      `http://127.0.0.1:${port}/health`,
      dir,
    );
    await p.stop();
    return p.startupMs;
  };
  try {
    const fresh = [];
    for (let i = 0; i < 3; i++) fresh.push(await once({ MARKET_DATA_DIR: join(dir, `fresh-${i}`) }));
    const existing = [];
    for (let i = 0; i < 3; i++) existing.push(await once({ MARKET_DATA_DIR: join(dir, 'fresh-0') }));
    const pg = [];
    for (let i = 0; i < 3; i++) pg.push(await once({ DATABASE_URL: databaseUrl }));
    return { postgres: median(pg), 'embedded (existing data dir)': median(existing), 'embedded (new data dir, initdb)': median(fresh) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
