/**
 * Growing past one instance: paid calls (exact, broadcast settlement, the client's standard mode)
 * through one registry + facilitator + skill server, and through two of each side by side on one
 * PostgreSQL database, each kind behind a round-robin proxy (bench/lib/instances.ts), the same
 * client load on the same anvil chain. On this 2-core machine both sizes share the same two cores
 * with PostgreSQL, anvil and the clients, so two instances cannot be faster than one by more than
 * what one leaves idle: read the ratio as "what two instances cost", not as what more cores give
 * (BENCHMARKS.md, Growing past one instance). Writes the `instances` section of bench/results.json.
 *   npm run build && npx bun bench/instances.ts
 *   (BENCH_INSTANCES_CALLS=400 paid calls per size, BENCH_INSTANCES_CLIENTS=32 clients at once)
 */
import { startChain } from '../test/support/chain';
import { ourClients } from './lib/clients';
import { benchDatabases } from './lib/databases';
import { type Instances, startInstances } from './lib/instances';
import { cpuLabels, PRICE, type Run, seriesOn } from './lib/paid-runs';
import { benchGate } from './lib/quiet';
import { fmt, printTable, saveSection } from './lib/results';

const CALLS = Number(process.env.BENCH_INSTANCES_CALLS ?? 400);
const CLIENTS = Number(process.env.BENCH_INSTANCES_CLIENTS ?? 32);
const SIZES = [1, 2];

async function main() {
  const gate = await benchGate('bench/instances.ts', 'instances');
  const databases = benchDatabases('market_bench_instances');
  const chain = await startChain({ payers: CLIENTS, relayers: 2 * SIZES.length, usdcPerPayer: 10_000_000_000n });
  cpuLabels.set(chain.pid, 'anvil');
  const runs: Run[] = [];
  const spread: Record<string, Record<string, readonly number[]>> = {};
  const run = seriesOn('instant', chain, runs);
  try {
    let relayer = 0;
    for (const n of SIZES) {
      const keys = Array.from({ length: n }, () => chain.accounts.relayers[relayer++]!.privateKey);
      const stack: Instances = await startInstances(chain, await databases.create(), n, keys);
      try {
        for (const [role, pid] of stack.pids) cpuLabels.set(pid, role);
        const label = n === 1 ? 'one instance of each' : `${n} instances of each, side by side`;
        await run(
          `${label}, ${CLIENTS} clients`,
          stack.payTo,
          (f) => ourClients(chain, stack.registryUrl, stack.slug, chain.accounts.payers.slice(0, CLIENTS), 'standard', f),
          CALLS,
        );
        spread[label] = Object.fromEntries(Object.entries(stack.proxies).map(([role, proxy]) => [role, [...proxy.served]]));
      } finally {
        for (const [, pid] of stack.pids) cpuLabels.delete(pid);
        await stack.stop();
      }
    }
  } finally {
    await chain.stop();
    await databases.dropAll();
  }

  printTable(
    `Paid calls through one and through two instances of each server (price $0.001, instant chain, ${CALLS} calls, ${CLIENTS} clients)`,
    ['run', 'calls/s', 'p50 ms', 'p95 ms', 'failed'],
    runs.map((r) => [r.label, fmt(r.callsPerSecond, 1), fmt(r.p50, 1), fmt(r.p95, 1), `${r.failures}/${r.calls}`]),
  );
  const groups = [...new Set(runs.flatMap((r) => Object.keys(r.cpuMsPerCall)))].sort();
  printTable(
    'CPU per paid call, ms, by process group (every instance of a role in its group; clients and proxies = the bench process)',
    ['run', ...groups],
    runs.map((r) => [r.label, ...groups.map((g) => fmt(r.cpuMsPerCall[g] ?? 0, 2))]),
  );
  console.log(`requests each instance got, by role: ${JSON.stringify(spread)}`);
  const [one, two] = runs as [Run, Run];
  const ratios = { twoVsOneCallsPerSecond: two.callsPerSecond / one.callsPerSecond };
  printTable(
    'Two instances / one (calls/s: on 2 cores expect about 1 or below)',
    ['measure', 'ratio'],
    Object.entries(ratios).map(([k, v]) => [k, fmt(v, 3)]),
  );
  saveSection('instances', { price: PRICE.toString(), clients: CLIENTS, runs, spread, ratios }, gate);
}

await main();
