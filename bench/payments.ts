/**
 * Paid calls, ours against the x402 reference stack, side by side on one anvil chain:
 *   ours      = `market serve` (skill server) + `market facilitator` (PostgreSQL ledger) + SkillMarket client
 *   reference = @x402/hono + the reference facilitator (@x402/core + @x402/evm, over HTTP) + @x402/fetch
 * Each server stack runs in its own processes; the clients run here. Prints sequential latency,
 * throughput under 32 concurrent clients, and round trips per call; writes bench/results.json.
 *   npm run build && npx bun bench/payments.ts      (BENCH_CALLS=200, BENCH_CONCURRENT_CALLS=400)
 */
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import postgres from 'postgres';
import { SkillMarket, type PaymentMode } from 'skill-market';
import { startChain, type LocalChain, type TestAccount } from '../test/support/chain';
import { fmt, printTable, saveSection } from './lib/results';
import { startOurStack, startReferenceStack } from './lib/stacks';

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 400);
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
}

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
  const before = await chain.balanceOf(payTo as `0x${string}`);
  const requestsBefore = countRequests();
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
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
  const moved = (await chain.balanceOf(payTo as `0x${string}`)) - before;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN;
  if (moved !== BigInt(latencies.length) * PRICE)
    throw new Error(`${label}: ${latencies.length} successes but ${moved} atomic units moved`);
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
  };
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

async function main() {
  const chain = await startChain({ payers: CLIENTS, relayers: 8, usdcPerPayer: 10_000_000_000n });
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
  const stops: (() => Promise<void>)[] = [];
  try {
    const relayer = (i: number) => chain.accounts.relayers[i]!.privateKey;
    const ours = await startOurStack(chain, await newDatabase(), [relayer(0)]);
    stops.push(ours.stop);
    const oursPool = await startOurStack(chain, await newDatabase(), [relayer(1), relayer(2), relayer(3), relayer(4)]);
    stops.push(oursPool.stop);
    const reference = await startReferenceStack(chain, relayer(5), true);
    stops.push(reference.stop);
    const shipped = await startReferenceStack(chain, relayer(6), false);
    stops.push(shipped.stop);

    const one = chain.accounts.payers.slice(0, 1);
    const all = chain.accounts.payers.slice(0, CLIENTS);
    const runs: Run[] = [];
    const run = async (label: string, payTo: string, make: (f: typeof fetch) => Pay[], calls: number) => {
      const c = counting();
      const result = await measure(label, chain, payTo, make(c.fetch), calls, c.count);
      runs.push(result);
      console.error(`${label}: ${fmt(result.callsPerSecond, 1)} calls/s, p50 ${fmt(result.p50, 1)} ms, ${result.failures} failed`);
      return result;
    };

    const seqOurs = await run(
      'ours, sequential',
      ours.payTo,
      (f) => ourClients(chain, ours.registryUrl, ours.slug, one, 'standard', f),
      CALLS,
    );
    const seqFast = await run(
      'ours one-round-trip, sequential',
      ours.payTo,
      (f) => ourClients(chain, ours.registryUrl, ours.slug, one, 'fast', f),
      CALLS,
    );
    const seqRef = await run(
      'reference, sequential',
      reference.payTo,
      (f) => referenceClients(chain, reference.resourceUrl, one, f),
      CALLS,
    );
    const conOurs = await run(
      `ours, ${CLIENTS} clients`,
      ours.payTo,
      (f) => ourClients(chain, ours.registryUrl, ours.slug, all, 'standard', f),
      CONCURRENT_CALLS,
    );
    const conFast = await run(
      `ours one-round-trip, ${CLIENTS} clients`,
      ours.payTo,
      (f) => ourClients(chain, ours.registryUrl, ours.slug, all, 'fast', f),
      CONCURRENT_CALLS,
    );
    const conPool = await run(
      `ours one-round-trip + 4 relayer keys, ${CLIENTS} clients`,
      oursPool.payTo,
      (f) => ourClients(chain, oursPool.registryUrl, oursPool.slug, all, 'fast', f),
      CONCURRENT_CALLS,
    );
    const conRef = await run(
      `reference (nonceManager), ${CLIENTS} clients`,
      reference.payTo,
      (f) => referenceClients(chain, reference.resourceUrl, all, f),
      CONCURRENT_CALLS,
    );
    const conShipped = await run(
      `reference as shipped, ${CLIENTS} clients`,
      shipped.payTo,
      (f) => referenceClients(chain, shipped.resourceUrl, all, f),
      CONCURRENT_CALLS,
    );

    printTable(
      `Paid calls on one anvil chain (price $0.001, ${CALLS} sequential / ${CONCURRENT_CALLS} concurrent calls)`,
      ['run', 'calls/s', 'p50 ms', 'p95 ms', 'failed', 'round trips/call'],
      runs.map((r) => [r.label, fmt(r.callsPerSecond, 1), fmt(r.p50, 1), fmt(r.p95, 1), `${r.failures}/${r.calls}`, fmt(r.roundTrips, 2)]),
    );
    const ratios = {
      sequentialCallsPerSecond: seqOurs.callsPerSecond / seqRef.callsPerSecond,
      sequentialOneRoundTripCallsPerSecond: seqFast.callsPerSecond / seqRef.callsPerSecond,
      sequentialP50: seqOurs.p50 / seqRef.p50,
      concurrentCallsPerSecond: conOurs.callsPerSecond / conRef.callsPerSecond,
      concurrentOneRoundTripCallsPerSecond: conFast.callsPerSecond / conRef.callsPerSecond,
      concurrentRelayerPoolCallsPerSecond: conPool.callsPerSecond / conRef.callsPerSecond,
    };
    printTable(
      'Ours / reference',
      ['measure', 'ratio'],
      Object.entries(ratios).map(([k, v]) => [k, fmt(v, 2)]),
    );
    console.log(`reference as shipped (no nonce manager): ${conShipped.failures} of ${conShipped.calls} calls failed`);
    saveSection('payments', { price: PRICE.toString(), clients: CLIENTS, runs, ratios });
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    for (const name of dbs) await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
    await chain.stop();
  }
}

await main();
