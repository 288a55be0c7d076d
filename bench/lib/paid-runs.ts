/**
 * One measured series of paid calls, shared by the paid-call benches: latency percentiles,
 * calls/s, round trips, transactions and CPU per call, and the money check (the payee received
 * exactly successes × price).
 */
import type { LocalChain } from '../../test/support/chain';
import { cpuSnapshot, cpuSpent } from './cpu';
import { fmt } from './results';

/** The price of every bench skill: $0.001 in atomic USDC. */
export const PRICE = 1000n;

/** Process ids of the running stacks and the chain, by the group their CPU time is counted in. */
export const cpuLabels = new Map<number, string>([[process.pid, 'clients']]);

/** One paid call by one client; true when it got its result. */
export type Pay = (i: number) => Promise<boolean>;

export interface Run {
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

/**
 * Runs `calls` paid calls over `clients` workers after `warmup` warm-up calls each (at least one:
 * the first pays a deposit where there is one); checks the payee received exactly the successes ×
 * price. Where money moves only later (payment channels), `settle` moves it: it runs after the
 * warm-up and after the run, before the balance is read.
 */
export async function measure(
  label: string,
  chain: LocalChain,
  payTo: string,
  clients: Pay[],
  calls: number,
  countRequests: () => number,
  settle?: (payeeBalance: bigint) => Promise<void>,
  warmup = 1,
): Promise<Run> {
  const start = await chain.balanceOf(payTo as `0x${string}`);
  let warmed = 0;
  for (const [i, pay] of clients.entries()) {
    for (let j = 0; j < Math.max(1, warmup); j++, warmed++) {
      if (!(await pay(-1 - i - j * clients.length))) throw new Error(`${label}: warm-up call failed`);
    }
  }
  await allMined(chain); // broadcast answers come before the block: the warm-up's transfers must not count
  await settle?.(start + BigInt(warmed) * PRICE);
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
  await settle?.(start + BigInt(warmed + latencies.length) * PRICE);
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

/**
 * {@link measure} for the series on one chain: each is labelled `<label> [<chainName>]`, counts its
 * requests to `/echo` as round trips, is printed as it ends and collected into `runs`. `make`
 * builds the clients on the counting fetch it is given.
 */
export function seriesOn(chainName: string, chain: LocalChain, runs: Run[]) {
  return async (
    label: string,
    payTo: string,
    make: (f: typeof fetch) => Pay[],
    calls: number,
    settle?: (payeeBalance: bigint) => Promise<void>,
    warmup = 1,
  ): Promise<Run> => {
    const c = counting();
    const result = await measure(`${label} [${chainName}]`, chain, payTo, make(c.fetch), calls, c.count, settle, warmup);
    runs.push(result);
    console.error(`${result.label}: ${fmt(result.callsPerSecond, 1)} calls/s, p50 ${fmt(result.p50, 1)} ms, ${result.failures} failed`);
    return result;
  };
}
