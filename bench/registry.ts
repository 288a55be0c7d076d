/**
 * Registry benchmarks on PostgreSQL at 10,000 and 100,000 skills, side by side with a ceiling
 * (bare Elysia + postgres.js, one indexed query per request, no cache) in the same run:
 * GET /skills/:slug, search (a common word, a rare word, a 3-letter prefix), newest-first pages
 * of GET /skills, the same searches and pages through the x402 Bazaar discovery API
 * (GET /discovery/search, GET /discovery/resources), then POST /analytics/view with deduplication
 * (first size only), and startup of the binary to first /health on PostgreSQL and on the embedded
 * database.
 *   npx bun bench/registry.ts   (BENCH_SECONDS=10, BENCH_SIZES=10000,100000 by default)
 */
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { runLoad, type LoadResult } from './lib/load';
import { freePort, startProcess } from './lib/processes';
import { benchGate } from './lib/quiet';
import { fmt, printTable, saveSection } from './lib/results';
import { seed, WORDS } from './lib/catalogue';

const ROOT = join(import.meta.dir, '..');
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const CONNECTIONS = 50;
const PAGES = 50;

type Rows = Record<string, { ours: LoadResult; ceiling?: LoadResult }>;

interface SizeResult {
  skills: number;
  /** Load average (1, 5, 15 min) before and after this size's runs: the machine is shared. */
  load: { before: number[]; after: number[] };
  endpoints: Rows;
  slugVsCeiling: number;
  /** The lowest of the three searches' ratios. */
  searchVsCeiling: number;
  /** The highest of the three searches' p99 (ms). */
  searchP99Ms: number;
  pagesVsCeiling: number;
  /** The lowest of the three Bazaar searches' ratios to the ceiling. */
  discoverySearchVsCeiling: number;
  /** Bazaar listing pages (limit and offset) against GET /skills pages (cursor), req/s. */
  discoveryPagesVsSkillsPages: number;
  viewsCounted?: number;
}

const SEARCHES = ['GET /skills?q= (common word)', 'GET /skills?q= (rare word)', 'GET /skills?q= (prefix, 3 letters)'] as const;
const DISCOVERY_SEARCHES = [
  'GET /discovery/search?query= (common word)',
  'GET /discovery/search?query= (rare word)',
  'GET /discovery/search?query= (prefix, 3 letters)',
] as const;
const DISCOVERY_PAGES = `GET /discovery/resources pages (limit 20, ${PAGES} offsets)`;

async function main() {
  const gate = await benchGate('bench/registry.ts', 'registry');
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const results: SizeResult[] = [];
  let startup: Record<string, number> | undefined;
  try {
    for (const [i, size] of SIZES.entries()) {
      results.push(
        await benchSize(admin, size, i === 0, async (url) => {
          if (i === SIZES.length - 1) startup = await measureStartup(url);
        }),
      );
    }
  } finally {
    await admin.end();
  }

  for (const r of results) {
    printTable(
      `Registry on PostgreSQL, ${r.skills.toLocaleString()} skills, ${CONNECTIONS} connections, ${SECONDS} s each (load average ${r.load.before.map((l) => l.toFixed(1)).join(' ')} before, ${r.load.after.map((l) => l.toFixed(1)).join(' ')} after)`,
      [
        'endpoint',
        'ours req/s',
        'ours p50 ms',
        'ours p99 ms',
        'ceiling req/s',
        'ceiling p50 ms',
        'ceiling p99 ms',
        'ours / ceiling',
        'non-2xx',
      ],
      Object.entries(r.endpoints).map(([label, { ours: o, ceiling: c }]) => [
        label,
        fmt(o.requestsPerSecond),
        fmt(o.p50, 1),
        fmt(o.p99, 1),
        c ? fmt(c.requestsPerSecond) : '-',
        c ? fmt(c.p50, 1) : '-',
        c ? fmt(c.p99, 1) : '-',
        c ? fmt(o.requestsPerSecond / c.requestsPerSecond, 2) : '-',
        o.non2xx + (c?.non2xx ?? 0),
      ]),
    );
    console.log(
      `slugVsCeiling ${r.slugVsCeiling.toFixed(2)}, searchVsCeiling ${r.searchVsCeiling.toFixed(2)} (lowest of three), searchP99Ms ${r.searchP99Ms} (highest of three), pagesVsCeiling ${r.pagesVsCeiling.toFixed(2)}`,
    );
    console.log(
      `discoverySearchVsCeiling ${r.discoverySearchVsCeiling.toFixed(2)} (lowest of three), discoveryPagesVsSkillsPages ${r.discoveryPagesVsSkillsPages.toFixed(2)}`,
    );
    if (r.viewsCounted !== undefined) {
      console.log(
        `views counted: ${r.viewsCounted} (new-visitor requests completed: ${r.endpoints['POST /analytics/view (new visitor each)']!.ours.total}, plus requests in flight at the end, plus 1 deduplicated visitor)`,
      );
    }
  }
  if (startup) {
    printTable(
      'Startup of dist/market to first /health',
      ['database', 'ms (median of 3)'],
      Object.entries(startup).map(([k, v]) => [k, fmt(v)]),
    );
  }
  const bySize = (pick: (r: SizeResult) => number) =>
    Object.fromEntries(results.map((r) => [String(r.skills), Number(pick(r).toFixed(3))]));
  saveSection(
    'registry',
    {
      connections: CONNECTIONS,
      seconds: SECONDS,
      slugVsCeiling: bySize((r) => r.slugVsCeiling),
      searchVsCeiling: bySize((r) => r.searchVsCeiling),
      searchP99Ms: bySize((r) => r.searchP99Ms),
      pagesVsCeiling: bySize((r) => r.pagesVsCeiling),
      discoverySearchVsCeiling: bySize((r) => r.discoverySearchVsCeiling),
      discoveryPagesVsSkillsPages: bySize((r) => r.discoveryPagesVsSkillsPages),
      sizes: Object.fromEntries(results.map((r) => [String(r.skills), r])),
      startupMs: startup,
    },
    gate,
  );
}

/** One catalogue size: a fresh database, the registry and the ceiling on it, every load. */
async function benchSize(
  admin: postgres.Sql,
  skills: number,
  withViews: boolean,
  atEnd: (databaseUrl: string) => Promise<void>,
): Promise<SizeResult> {
  const name = `market_bench_${Date.now().toString(36)}`;
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const stops: (() => Promise<void>)[] = [];
  try {
    await seed(databaseUrl, skills);
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
        // The catalogue's server (skills.example.com) cannot answer a probe here: probed, it would
        // be down, and the Bazaar catalogue, which leaves out skills of servers down, empty.
        MARKET_HEALTH_PROBES: 'false',
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
    const ours = `http://127.0.0.1:${registryPort}`;
    const bare = `http://127.0.0.1:${ceilingPort}`;
    const load = (base: string, extra: Partial<Parameters<typeof runLoad>[0]>) =>
      runLoad({ url: base, connections: CONNECTIONS, duration: SECONDS, ...extra });
    const side = async (oursPaths: string[], ceilingPaths: string[]) => ({
      ours: await load(ours, { paths: oursPaths }),
      ceiling: await load(bare, { paths: ceilingPaths }),
    });

    const before = loadavg();
    const rows: Rows = {};
    const slugs = Array.from({ length: 1000 }, (_, i) => `/skills/skill-${1 + ((i * 7919) % skills)}`);
    rows['GET /skills/:slug'] = await side(slugs, slugs);
    // Common: each of 20 words is in about a tenth of the skills. Rare: a number in one skill
    // (from a tenth of the size up, so no longer number starts with it). Prefix: 3 letters of a word.
    const common = WORDS;
    const rare = Array.from({ length: 1000 }, (_, i) => String(skills / 10 + ((i * 7919) % (skills - skills / 10))));
    const prefixes = WORDS.map((w) => w.slice(0, 3));
    for (const [label, words] of [
      [SEARCHES[0], common],
      [SEARCHES[1], rare],
      [SEARCHES[2], prefixes],
    ] as const) {
      rows[label] = await side(
        words.map((w) => `/skills?q=${w}`),
        words.map((w) => `/search?q=${w}`),
      );
    }
    const cursors = await pageCursors(ours);
    rows[`GET /skills pages (newest, ${PAGES} pages)`] = await side(
      cursors.map((c) => `/skills?limit=20${c ? `&cursor=${c}` : ''}`),
      cursors.map((c) => `/page${c ? `?cursor=${c}` : ''}`),
    );
    // The same words through the Bazaar search (ceiling: the same full-text query), and the
    // Bazaar listing's first pages by offset (oldest first, with the total).
    await expectCatalogue(ours, skills);
    for (const [label, words] of [
      [DISCOVERY_SEARCHES[0], common],
      [DISCOVERY_SEARCHES[1], rare],
      [DISCOVERY_SEARCHES[2], prefixes],
    ] as const) {
      rows[label] = await side(
        words.map((w) => `/discovery/search?query=${w}`),
        words.map((w) => `/search?q=${w}`),
      );
    }
    // Each page asked once first, as pageCursors does for GET /skills pages.
    const offsets = Array.from({ length: PAGES }, (_, i) => `/discovery/resources?limit=20&offset=${i * 20}`);
    for (const path of offsets) await fetch(`${ours}${path}`);
    rows[DISCOVERY_PAGES] = { ours: await load(ours, { paths: offsets }) };

    let viewsCounted: number | undefined;
    if (withViews) {
      const skillId = ((await (await fetch(`${ours}/skills/skill-42`)).json()) as { id: string }).id;
      const viewBody = JSON.stringify({ skillId });
      const headers = { 'content-type': 'application/json' };
      rows['POST /analytics/view (new visitor each)'] = {
        ours: await load(ours, { method: 'POST', body: viewBody, headers, forwardedFor: true, paths: ['/analytics/view'] }),
      };
      rows['POST /analytics/view (one visitor, deduplicated)'] = {
        ours: await load(ours, { method: 'POST', body: viewBody, headers, paths: ['/analytics/view'] }),
      };
      viewsCounted = ((await (await fetch(`${ours}/analytics/${skillId}`)).json()) as { viewCount: number }).viewCount;
    }
    const after = loadavg();

    for (const stop of stops.splice(0).reverse()) await stop();
    await atEnd(databaseUrl);

    const ratio = (label: string) => rows[label]!.ours.requestsPerSecond / rows[label]!.ceiling!.requestsPerSecond;
    return {
      skills,
      load: { before, after },
      endpoints: rows,
      slugVsCeiling: ratio('GET /skills/:slug'),
      searchVsCeiling: Math.min(...SEARCHES.map(ratio)),
      searchP99Ms: Math.max(...SEARCHES.map((s) => rows[s]!.ours.p99)),
      pagesVsCeiling: ratio(`GET /skills pages (newest, ${PAGES} pages)`),
      discoverySearchVsCeiling: Math.min(...DISCOVERY_SEARCHES.map(ratio)),
      discoveryPagesVsSkillsPages:
        rows[DISCOVERY_PAGES]!.ours.requestsPerSecond / rows[`GET /skills pages (newest, ${PAGES} pages)`]!.ours.requestsPerSecond,
      ...(viewsCounted !== undefined ? { viewsCounted } : {}),
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await admin.unsafe(`drop database if exists ${name} with (force)`);
  }
}

/** The Bazaar catalogue offers every skill (so its rows measure full answers, not empty ones). */
async function expectCatalogue(base: string, skills: number): Promise<void> {
  const listed = (await (await fetch(`${base}/discovery/resources?limit=1`)).json()) as { pagination: { total: number } };
  const found = (await (await fetch(`${base}/discovery/search?query=${WORDS[0]}`)).json()) as { resources: unknown[] };
  if (listed.pagination.total !== skills || found.resources.length !== 20) {
    throw new Error(`the Bazaar catalogue offers ${listed.pagination.total} of ${skills} skills, search found ${found.resources.length}`);
  }
}

/** The cursors of the first PAGES pages of GET /skills (newest first), the first page's being ''. */
async function pageCursors(base: string): Promise<string[]> {
  const cursors = [''];
  while (cursors.length < PAGES) {
    const last = cursors[cursors.length - 1]!;
    const res = await fetch(`${base}/skills?limit=20${last ? `&cursor=${last}` : ''}`);
    const next = res.headers.get('x-next-cursor');
    if (!next) break;
    cursors.push(next);
  }
  return cursors;
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
