/**
 * Where a paid call's time goes: sequential paid calls through our skill server and facilitator
 * (PostgreSQL ledger) on an instant anvil chain, in one process, with timing spans around each
 * piece: the 402 round trip, signing, the paid request, and inside it the facilitator's /verify and
 * /settle, and inside those every JSON-RPC call by method. Prints medians per call, per mode.
 *   npx bun bench/payment-spans.ts [calls=100]      (needs PostgreSQL, as the other benches)
 */
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { createPublicClient, custom, http, type PublicClient } from 'viem';
import { serve, skill } from 'skill-market/creator';
import { openDatabase } from '../src/db';
import { createFacilitator } from '../src/facilitator';
import { createLogger } from '../src/log';
import { startChain } from '../test/support/chain';
import { postJson, proofFor } from '../test/support/skill-server';
import { fmt, printTable } from './lib/results';

const CALLS = Number(process.argv[2] ?? 100);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Durations per span name, one list per call. */
class Spans {
  private current = new Map<string, number>();
  readonly calls: Map<string, number>[] = [];
  add(name: string, ms: number) {
    this.current.set(name, (this.current.get(name) ?? 0) + ms);
  }
  async time<T>(name: string, run: () => Promise<T>): Promise<T> {
    const t = performance.now();
    try {
      return await run();
    } finally {
      this.add(name, performance.now() - t);
    }
  }
  next() {
    this.calls.push(this.current);
    this.current = new Map();
  }
  medians(): [string, number][] {
    const names = [...new Set(this.calls.flatMap((c) => [...c.keys()]))];
    return names.map((name) => {
      const values = this.calls.map((c) => c.get(name) ?? 0).sort((a, b) => a - b);
      return [name, values[Math.floor(values.length / 2)] ?? 0];
    });
  }
}

const spans = new Spans();
const chain = await startChain({ payers: 1, relayers: 1, usdcPerPayer: 10_000_000_000n });
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
const dbName = `market_bench_spans_${Date.now().toString(36)}`;
await admin.unsafe(`create database ${dbName}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${dbName}`;
const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 10 });
try {
  const rpc = http(chain.rpcUrl)({});
  const timedClient = createPublicClient({
    transport: custom({
      request: (args: { method: string; params?: unknown }) => spans.time(`  rpc ${args.method}`, () => rpc.request(args)),
    }),
    cacheTime: 0,
    pollingInterval: 20,
  }) as PublicClient;
  const facilitator = createFacilitator({
    database,
    logger: createLogger('warn'),
    publicClient: timedClient,
    config: {
      network: chain.network,
      rpcUrl: chain.rpcUrl,
      relayerPrivateKeys: [chain.accounts.relayer.privateKey],
      assets: [chain.token.address],
      pollIntervalMs: 20,
    },
  });
  await facilitator.start();
  facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
  const facilitatorUrl = `http://127.0.0.1:${facilitator.app.server!.port}`;
  const timedFetch = ((input: string | URL | Request, init?: RequestInit) => {
    const path = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url).pathname.split('/')[1];
    // GET /settlements: the confirmation check of a broadcast payment, off the response path.
    const name = path === 'settlements' ? 'background: facilitator /settlements' : ` facilitator /${path}`;
    return spans.time(name, () => fetch(input, init));
  }) as typeof fetch;
  const payTo = (await chain.createAccount()).address;
  const asset = { address: chain.token.address, name: chain.token.name, version: chain.token.version, decimals: chain.token.decimals };
  const echo = skill({ price: '$0.001' }, (input: unknown) => input);
  const quiet = { info() {}, warn() {}, error() {} };
  const rows: string[][] = [];
  for (const mode of ['confirmed', 'broadcast'] as const) {
    const server = await serve(
      { echo },
      {
        port: 0,
        hostname: '127.0.0.1',
        wallet: payTo,
        facilitatorUrl,
        network: chain.network,
        asset,
        trackCalls: false,
        settlement: mode,
        fetch: timedFetch,
        logger: quiet,
        env: {},
      },
    );
    spans.calls.length = 0;
    for (let i = -5; i < CALLS; i++) {
      const began = performance.now();
      const proof = await spans.time('402 round trip + signing', () => proofFor(`${server.url}/echo`, { i }, chain.accounts.payer));
      const res = await spans.time('paid request', () => postJson(`${server.url}/echo`, { i }, { 'X-Payment': proof }));
      if (res.status !== 200) throw new Error(`paid call answered ${res.status}: ${await res.text()}`);
      spans.add('whole call', performance.now() - began);
      spans.next();
    }
    spans.calls.splice(0, 5); // warm-up
    for (const [name, ms] of spans.medians()) rows.push([mode, name, fmt(ms, 2)]);
    await server.stop();
  }
  // One database round trip under the same load, for scale: a paid call makes 2 at verify (the
  // payer's standing beside the chain checks, then the insert) and 2 (broadcast) or 3 (confirmed) at settle.
  const roundTrips: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await database.db.execute(sql`select 1`);
    roundTrips.push(performance.now() - t);
  }
  roundTrips.sort((a, b) => a - b);
  rows.push(['-', 'one database round trip (select 1)', fmt(roundTrips[100] ?? 0, 2)]);
  printTable(`Median ms per sequential paid call (${CALLS} calls per mode; spans nest by indent)`, ['mode', 'span', 'ms'], rows);
  await facilitator.app.stop();
  await facilitator.stop();
} finally {
  await database.close();
  await admin.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
  await admin.end();
  await chain.stop();
}
