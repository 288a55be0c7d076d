/**
 * Paid calls, ours against the x402 reference stack, side by side on one anvil chain:
 *   ours      = `market serve` (skill server) + `market facilitator` (PostgreSQL ledger) + SkillMarket client
 *   reference = @x402/hono + the reference facilitator (@x402/core + @x402/evm, over HTTP) + @x402/fetch
 * Each server stack runs in its own processes; the clients run here. Two chains: an instant one
 * (anvil automining) and a realistic one (`--block-time 2`, as Base). Ours runs in both settlement
 * modes (`confirmed`: answer once mined; `broadcast`: once the node accepted the transfer). Prints
 * sequential latency, throughput under 32 concurrent clients, and round trips per call; writes
 * the `payments` section of bench/results.json.
 *   npm run build && npx bun bench/payments.ts
 *   (BENCH_CALLS=200, BENCH_CONCURRENT_CALLS=400; on 2 s blocks BENCH_BLOCK_CALLS=20, BENCH_BLOCK_CONCURRENT_CALLS=128)
 */
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { loadavg } from 'node:os';
import postgres from 'postgres';
import { SkillMarket, type PaymentMode } from 'skill-market';
import { startChain, type LocalChain, type TestAccount } from '../test/support/chain';
import { cpuSnapshot, cpuSpent } from './lib/cpu';
import { fmt, printTable, saveSection } from './lib/results';
import { type OurStack, startOurStack, startReferenceStack } from './lib/stacks';

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 400);
const BLOCK_CALLS = Number(process.env.BENCH_BLOCK_CALLS ?? 20);
const BLOCK_CONCURRENT_CALLS = Number(process.env.BENCH_BLOCK_CONCURRENT_CALLS ?? 128);
const CLIENTS = 32;
const PRICE = 1000n;
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Run {
  label: string;
  calls: number;
  failures: number;
  seconds: number;
  callsPerSecond: number;
  p50: number;
  p95: number;
  roundTrips: number;
  moved: string;
  /** Settlement transactions sent per successful call (below 1: payments shared transactions). */
  transactionsPerCall: number;
  /** CPU milliseconds per successful call, by process group (clients = this process). */
  cpuMsPerCall: Record<string, number>;
}

/** Process ids of the running stacks and the chain, by the group their CPU time is counted in. */
const cpuLabels = new Map<number, string>([[process.pid, 'clients']]);

type Pay = (i: number) => Promise<boolean>;

/** Runs `calls` paid calls over `clients` workers; checks the payee received exactly the successes × price. */
async function measure(
  label: string,
  chain: LocalChain,
  payTo: string,
  clients: Pay[],
  calls: number,
  countRequests: () => number,
): Promise<Run> {
  for (const [i, pay] of clients.entries()) if (!(await pay(-1 - i))) throw new Error(`${label}: warm-up call failed`);
  await allMined(chain); // broadcast answers come before the block: the warm-up's transfers must not count
  const before = await chain.balanceOf(payTo as `0x${string}`);
  const requestsBefore = countRequests();
  const sentBefore = await sentByRelayers(chain);
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const cpuBefore = cpuSnapshot();
  const began = performance.now();
  await Promise.all(
    clients.map(async (pay) => {
      for (let i = next++; i < calls; i = next++) {
        const t = performance.now();
        if (await pay(i)) latencies.push(performance.now() - t);
        else failures++;
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  const cpu = cpuSpent(cpuBefore, cpuSnapshot(), cpuLabels);
  await allMined(chain); // the last broadcast answers' transfers
  const transactions = (await sentByRelayers(chain)) - sentBefore;
  const expected = BigInt(latencies.length) * PRICE;
  const moved = (await chain.balanceOf(payTo as `0x${string}`)) - before;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN;
  if (moved !== expected) throw new Error(`${label}: ${latencies.length} successes but ${moved} atomic units moved`);
  return {
    label,
    calls,
    failures,
    seconds,
    callsPerSecond: latencies.length / seconds,
    p50: pct(0.5),
    p95: pct(0.95),
    roundTrips: (countRequests() - requestsBefore) / calls,
    moved: moved.toString(),
    transactionsPerCall: transactions / Math.max(1, latencies.length),
    cpuMsPerCall: Object.fromEntries(
      Object.entries(cpu)
        .filter(([, ms]) => ms > 0)
        .map(([group, ms]) => [group, Number((ms / Math.max(1, latencies.length)).toFixed(2))]),
    ),
  };
}

/** Transactions sent by all relayers so far (pending included). */
async function sentByRelayers(chain: LocalChain): Promise<number> {
  const counts = await Promise.all(
    chain.accounts.relayers.map((r) => chain.publicClient.getTransactionCount({ address: r.address, blockTag: 'pending' })),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Waits until every relayer's sent transactions are mined. */
async function allMined(chain: LocalChain): Promise<void> {
  for (const relayer of chain.accounts.relayers) {
    const count = (blockTag: 'pending' | 'latest') => chain.publicClient.getTransactionCount({ address: relayer.address, blockTag });
    for (let i = 0; i < 100 && (await count('pending')) > (await count('latest')); i++) await new Promise((r) => setTimeout(r, 100));
  }
}

function counting(): { fetch: typeof fetch; count: () => number } {
  let n = 0;
  const wrapped = ((input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (/\/echo$/.test(url)) n++;
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: wrapped, count: () => n };
}

function ourClients(
  chain: LocalChain,
  apiUrl: string,
  slug: string,
  payers: TestAccount[],
  mode: PaymentMode,
  fetchImpl: typeof fetch,
): Pay[] {
  const asset = {
    network: chain.network,
    address: chain.token.address,
    name: chain.token.name,
    version: chain.token.version,
    decimals: chain.token.decimals,
  };
  return payers.map((wallet) => {
    const market = new SkillMarket({ apiUrl, wallet, network: chain.network, assets: [asset], mode, fetch: fetchImpl });
    return (i) =>
      market.call(slug, { i }).then(
        () => true,
        () => false,
      );
  });
}

function referenceClients(chain: LocalChain, url: string, payers: TestAccount[], fetchImpl: typeof fetch): Pay[] {
  return payers.map((signer) => {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer });
    client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.token.address }] });
    const pay = wrapFetchWithPayment(fetchImpl, client);
    return (i) =>
      pay(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ i }) }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status === 200;
        },
        () => false,
      );
  });
}

interface ChainRuns {
  runs: Run[];
  ours: { sequentialConfirmed: Run; sequentialBroadcast: Run; sequentialBroadcastOneTrip: Run; sequentialBatched: Run; concurrent: Run[] };
  reference: { sequential: Run; concurrent: Run; shipped?: Run };
}

/** Our stacks (confirmed, broadcast) and the reference stacks on one chain; the paid-call runs on it. */
async function benchChain(
  name: string,
  anvilArgs: string[],
  sizes: { sequential: number; concurrent: number; shipped: boolean },
  newDatabase: () => Promise<string>,
): Promise<ChainRuns> {
  const chain = await startChain({ payers: CLIENTS, relayers: 8, usdcPerPayer: 10_000_000_000n, anvilArgs });
  const stops: (() => Promise<void>)[] = [];
  cpuLabels.set(chain.pid, 'anvil');
  try {
    const relayer = (i: number) => chain.accounts.relayers[i]!.privateKey;
    const confirmed = await startOurStack(chain, await newDatabase(), [relayer(0)], 'confirmed');
    stops.push(confirmed.stop);
    const broadcast = await startOurStack(chain, await newDatabase(), [relayer(1)], 'broadcast');
    stops.push(broadcast.stop);
    // Broadcast mode with eager batches: a payment alone goes at once, payments that arrive during a broadcast share the next transaction.
    const batched = await startOurStack(chain, await newDatabase(), [relayer(2)], 'broadcast', {
      FACILITATOR_BATCH_MAX: String(CLIENTS),
      FACILITATOR_BATCH_EAGER: 'true',
    });
    stops.push(batched.stop);
    const reference = await startReferenceStack(chain, relayer(5), true);
    stops.push(reference.stop);
    const shipped = sizes.shipped ? await startReferenceStack(chain, relayer(6), false) : undefined;
    if (shipped) stops.push(shipped.stop);
    for (const stack of [confirmed, broadcast, batched]) for (const [role, pid] of Object.entries(stack.pids)) cpuLabels.set(pid, role);
    for (const stack of [reference, shipped]) if (stack) cpuLabels.set(stack.pid, 'reference (server + facilitator)');

    const one = chain.accounts.payers.slice(0, 1);
    const all = chain.accounts.payers.slice(0, CLIENTS);
    const runs: Run[] = [];
    const run = async (label: string, payTo: string, make: (f: typeof fetch) => Pay[], calls: number) => {
      const c = counting();
      const result = await measure(`${label} [${name}]`, chain, payTo, make(c.fetch), calls, c.count);
      runs.push(result);
      console.error(`${result.label}: ${fmt(result.callsPerSecond, 1)} calls/s, p50 ${fmt(result.p50, 1)} ms, ${result.failures} failed`);
      return result;
    };
    const ours = (stack: OurStack, payers: TestAccount[], mode: PaymentMode) => (f: typeof fetch) =>
      ourClients(chain, stack.registryUrl, stack.slug, payers, mode, f);
    const refs = (url: string, payers: TestAccount[]) => (f: typeof fetch) => referenceClients(chain, url, payers, f);

    const sequentialConfirmed = await run(
      'ours confirmed, sequential',
      confirmed.payTo,
      ours(confirmed, one, 'standard'),
      sizes.sequential,
    );
    const sequentialBroadcast = await run(
      'ours broadcast, sequential',
      broadcast.payTo,
      ours(broadcast, one, 'standard'),
      sizes.sequential,
    );
    const sequentialBroadcastOneTrip = await run(
      'ours broadcast one-round-trip, sequential',
      broadcast.payTo,
      ours(broadcast, one, 'fast'),
      sizes.sequential,
    );
    const sequentialBatched = await run(
      'ours broadcast one-round-trip, eager batches, sequential',
      batched.payTo,
      ours(batched, one, 'fast'),
      sizes.sequential,
    );
    const sequential = await run('reference, sequential', reference.payTo, refs(reference.resourceUrl, one), sizes.sequential);
    const concurrent = [
      await run(`ours broadcast one-round-trip, ${CLIENTS} clients`, broadcast.payTo, ours(broadcast, all, 'fast'), sizes.concurrent),
      await run(`ours broadcast, ${CLIENTS} clients`, broadcast.payTo, ours(broadcast, all, 'standard'), sizes.concurrent),
      await run(`ours confirmed one-round-trip, ${CLIENTS} clients`, confirmed.payTo, ours(confirmed, all, 'fast'), sizes.concurrent),
      await run(
        `ours broadcast one-round-trip, eager batches, ${CLIENTS} clients`,
        batched.payTo,
        ours(batched, all, 'fast'),
        sizes.concurrent,
      ),
    ];
    const referenceConcurrent = await run(
      `reference (nonceManager), ${CLIENTS} clients`,
      reference.payTo,
      refs(reference.resourceUrl, all),
      sizes.concurrent,
    );
    const shippedRun = shipped
      ? await run(`reference as shipped, ${CLIENTS} clients`, shipped.payTo, refs(shipped.resourceUrl, all), sizes.concurrent)
      : undefined;
    return {
      runs,
      ours: { sequentialConfirmed, sequentialBroadcast, sequentialBroadcastOneTrip, sequentialBatched, concurrent },
      reference: { sequential, concurrent: referenceConcurrent, ...(shippedRun ? { shipped: shippedRun } : {}) },
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await chain.stop();
  }
}

const best = (runs: Run[], by: (r: Run) => number, lowest: boolean) =>
  runs.reduce((a, b) => ((lowest ? by(b) < by(a) : by(b) > by(a)) ? b : a));

async function main() {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbs: string[] = [];
  const newDatabase = async () => {
    const name = `market_bench_pay_${Date.now().toString(36)}_${dbs.length}`;
    await admin.unsafe(`create database ${name}`);
    dbs.push(name);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    return url.toString();
  };
  try {
    const load = loadavg();
    const instant = await benchChain('instant', [], { sequential: CALLS, concurrent: CONCURRENT_CALLS, shipped: true }, newDatabase);
    const blocks = await benchChain(
      '2 s blocks',
      ['--block-time', '2'],
      { sequential: BLOCK_CALLS, concurrent: BLOCK_CONCURRENT_CALLS, shipped: false },
      newDatabase,
    );
    const runs = [...instant.runs, ...blocks.runs];
    printTable(
      `Paid calls (price $0.001; instant chain ${CALLS} sequential / ${CONCURRENT_CALLS} concurrent; 2 s blocks ${BLOCK_CALLS} / ${BLOCK_CONCURRENT_CALLS})`,
      ['run', 'calls/s', 'p50 ms', 'p95 ms', 'failed', 'round trips/call', 'transactions/call'],
      runs.map((r) => [
        r.label,
        fmt(r.callsPerSecond, 1),
        fmt(r.p50, 1),
        fmt(r.p95, 1),
        `${r.failures}/${r.calls}`,
        fmt(r.roundTrips, 2),
        fmt(r.transactionsPerCall, 2),
      ]),
    );
    const groups = [...new Set(runs.flatMap((r) => Object.keys(r.cpuMsPerCall)))].sort();
    printTable(
      'CPU per paid call, ms, by process (2 cores shared by all; clients = the bench process)',
      ['run', ...groups, 'total'],
      runs.map((r) => [
        r.label,
        ...groups.map((g) => fmt(r.cpuMsPerCall[g] ?? 0, 2)),
        fmt(
          Object.values(r.cpuMsPerCall).reduce((a, b) => a + b, 0),
          2,
        ),
      ]),
    );
    const sequentialOf = (c: ChainRuns) => [
      c.ours.sequentialConfirmed,
      c.ours.sequentialBroadcast,
      c.ours.sequentialBroadcastOneTrip,
      c.ours.sequentialBatched,
    ];
    const ratios = {
      /** Best mode of ours, instant chain: p50 ours / reference (lower is better). */
      sequentialP50: best(sequentialOf(instant), (r) => r.p50, true).p50 / instant.reference.sequential.p50,
      sequentialP50Confirmed: instant.ours.sequentialConfirmed.p50 / instant.reference.sequential.p50,
      /** Best mode of ours, 2 s blocks: p50 ours / reference (lower is better). */
      blockTime2sP50: best(sequentialOf(blocks), (r) => r.p50, true).p50 / blocks.reference.sequential.p50,
      blockTime2sP50Confirmed: blocks.ours.sequentialConfirmed.p50 / blocks.reference.sequential.p50,
      /** Best mode of ours, 32 clients, instant chain: calls/s ours / reference with nonceManager (higher is better). */
      concurrent32CallsPerSecond:
        best(instant.ours.concurrent, (r) => r.callsPerSecond, false).callsPerSecond / instant.reference.concurrent.callsPerSecond,
      concurrent32CallsPerSecondConfirmed: instant.ours.concurrent[2]!.callsPerSecond / instant.reference.concurrent.callsPerSecond,
      blockTime2sConcurrent32CallsPerSecond:
        best(blocks.ours.concurrent, (r) => r.callsPerSecond, false).callsPerSecond / blocks.reference.concurrent.callsPerSecond,
    };
    printTable(
      'Ours / reference (p50: lower is better; calls/s: higher is better)',
      ['measure', 'ratio'],
      Object.entries(ratios).map(([k, v]) => [k, fmt(v, 3)]),
    );
    const shipped = instant.reference.shipped;
    if (shipped) console.log(`reference as shipped (no nonce manager): ${shipped.failures} of ${shipped.calls} calls failed`);
    console.log(
      `load average at start: ${load.map((l) => l.toFixed(2)).join(' ')}; at end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    saveSection('payments', { price: PRICE.toString(), clients: CLIENTS, loadAverageAtStart: load, runs, ratios });
  } finally {
    for (const name of dbs) await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  }
}

await main();
