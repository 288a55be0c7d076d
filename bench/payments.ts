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
import type { PaymentMode } from 'skill-market';
import { startChain, type TestAccount } from '../test/support/chain';
import { ourClients, referenceClients } from './lib/clients';
import { benchDatabases } from './lib/databases';
import { cpuLabels, PRICE, type Run, seriesOn } from './lib/paid-runs';
import { benchGate } from './lib/quiet';
import { fmt, printTable, saveSection } from './lib/results';
import { type OurStack, startOurStack, startReferenceStack } from './lib/stacks';

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 400);
const BLOCK_CALLS = Number(process.env.BENCH_BLOCK_CALLS ?? 20);
const BLOCK_CONCURRENT_CALLS = Number(process.env.BENCH_BLOCK_CONCURRENT_CALLS ?? 128);
const CLIENTS = 32;

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
    const run = seriesOn(name, chain, runs);
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
  const gate = await benchGate('bench/payments.ts', 'payments');
  const databases = benchDatabases('market_bench_pay');
  try {
    const instant = await benchChain('instant', [], { sequential: CALLS, concurrent: CONCURRENT_CALLS, shipped: true }, databases.create);
    const blocks = await benchChain(
      '2 s blocks',
      ['--block-time', '2'],
      { sequential: BLOCK_CALLS, concurrent: BLOCK_CONCURRENT_CALLS, shipped: false },
      databases.create,
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
    saveSection('payments', { price: PRICE.toString(), clients: CLIENTS, runs, ratios }, gate);
  } finally {
    await databases.dropAll();
  }
}

await main();
