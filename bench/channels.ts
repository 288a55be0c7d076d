/**
 * Paid calls over x402 `batch-settlement` payment channels, side by side on one anvil chain:
 *   ours channel   = `market serve` + `market facilitator` + SkillMarket paying `channel`
 *   batch reference = @x402/hono + @x402/evm's batch-settlement server, facilitator and client
 *                    (bench/reference/batch-stack.ts), on our contract
 *   exact reference = @x402/hono + the reference facilitator (`exact`) + @x402/fetch
 * Each stack runs in its own processes; the clients run here, one payer (one channel) each.
 * A series starts after one warm-up call per client (the deposit); its money check comes after the
 * stack's claim and settle: the payee received exactly successes × price. Gas per call, from the
 * contract's transactions of the 32-client run (deposits, the claim of every channel in one
 * transaction, the settle), amortised as a channel of k calls pays them: the deposit that opens it
 * (a top-up into an open channel costs less: no new channel record, no ChannelCreated), its share
 * of one claim and of one settle. Writes `payments.channels` into bench/results.json.
 *   npm run build && npx bun bench/channels.ts
 *   (BENCH_CHANNEL_CALLS=200, BENCH_CHANNEL_CONCURRENT_CALLS=800; on 2 s blocks 40 / 400)
 */
import { type Hex, parseEventLogs } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../src/chain/batch-settlement';
import { type LocalChain, startChain } from '../test/support/chain';
import { batchReferenceClients, ourChannelClients, referenceClients } from './lib/clients';
import { benchDatabases } from './lib/databases';
import { cpuLabels, type Run, seriesOn } from './lib/paid-runs';
import { benchGate } from './lib/quiet';
import { fmt, printTable, savePart } from './lib/results';
import { startBatchReferenceStack, startOurStack, startReferenceStack } from './lib/stacks';

const CALLS = Number(process.env.BENCH_CHANNEL_CALLS ?? 200);
const CONCURRENT_CALLS = Number(process.env.BENCH_CHANNEL_CONCURRENT_CALLS ?? 800);
const BLOCK_CALLS = Number(process.env.BENCH_CHANNEL_BLOCK_CALLS ?? 40);
const BLOCK_CONCURRENT_CALLS = Number(process.env.BENCH_CHANNEL_BLOCK_CONCURRENT_CALLS ?? 400);
/** Calls each stack's sequential client makes before its measured series (the first is the deposit): the same for every stack. */
const WARMUP = Number(process.env.BENCH_CHANNEL_WARMUP ?? 200);
const BLOCK_WARMUP = Number(process.env.BENCH_CHANNEL_BLOCK_WARMUP ?? 10);
const CLIENTS = 32;

/** Gas of the contract's transactions in blocks (from, to]: per deposit, per claimed channel, per settle. */
async function channelGas(chain: LocalChain, from: bigint, to: bigint) {
  const totals = {
    deposits: 0,
    depositGas: 0n,
    openingDeposits: 0,
    openingGas: 0n,
    claimedChannels: 0,
    claimGas: 0n,
    settles: 0,
    settleGas: 0n,
  };
  for (let n = from + 1n; n <= to; n++) {
    const block = await chain.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      const receipt = await chain.publicClient.getTransactionReceipt({ hash: tx.hash as Hex });
      const events = parseEventLogs({
        abi: batchSettlementAbi,
        logs: receipt.logs.filter((l) => l.address.toLowerCase() === BATCH_SETTLEMENT_ADDRESS.toLowerCase()),
      });
      const count = (name: string) => events.filter((e) => e.eventName === name).length;
      const [deposited, claimed, settled] = [count('Deposited'), count('Claimed'), count('Settled')];
      if (deposited > 0) {
        totals.deposits += deposited;
        totals.depositGas += receipt.gasUsed;
        if (count('ChannelCreated') === deposited) {
          totals.openingDeposits += deposited;
          totals.openingGas += receipt.gasUsed;
        }
      } else if (claimed > 0) {
        totals.claimedChannels += claimed;
        totals.claimGas += receipt.gasUsed; // a claim that also settles is weighed as the claim
        totals.settles += settled;
      } else if (settled > 0) {
        totals.settles += settled;
        totals.settleGas += receipt.gasUsed;
      }
    }
  }
  const perDeposit = totals.openingDeposits ? Number(totals.openingGas) / totals.openingDeposits : Number.NaN;
  const topUps = totals.deposits - totals.openingDeposits;
  const perTopUp = topUps ? Number(totals.depositGas - totals.openingGas) / topUps : Number.NaN;
  const perClaimedChannel = totals.claimedChannels ? Number(totals.claimGas) / totals.claimedChannels : Number.NaN;
  const perSettledChannel = totals.claimedChannels ? Number(totals.settleGas) / totals.claimedChannels : Number.NaN;
  const perCall = (k: number) => Math.round((perDeposit + perClaimedChannel + perSettledChannel) / k);
  return {
    ...Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : v])),
    perDeposit: Math.round(perDeposit),
    perTopUp: Number.isNaN(perTopUp) ? null : Math.round(perTopUp),
    perClaimedChannel: Math.round(perClaimedChannel),
    perSettledChannel: Math.round(perSettledChannel),
    gasPerCall: { k10: perCall(10), k100: perCall(100), k1000: perCall(1000) },
  };
}

interface ChainResult {
  runs: Run[];
  ours: { sequential: Run; concurrent: Run; gas: Awaited<ReturnType<typeof channelGas>> };
  batch: { sequential: Run; concurrent: Run; gas: Awaited<ReturnType<typeof channelGas>> };
  exact: { sequential: Run; concurrent: Run };
}

async function benchChain(
  name: string,
  anvilArgs: string[],
  sizes: { sequential: number; concurrent: number; warmup: number },
  databaseUrl: () => Promise<string>,
) {
  const chain = await startChain({ payers: CLIENTS * 3, relayers: 4, usdcPerPayer: 10_000_000_000n, anvilArgs });
  const stops: (() => Promise<void>)[] = [];
  cpuLabels.set(chain.pid, 'anvil');
  try {
    // Our skill server claims what each channel was charged within 2 s, as a busy server's age rule would, and
    // settles 2 s after the first claim it has not swept (one settle for the claims of those 2 s).
    const ours = await startOurStack(chain, await databaseUrl(), [chain.accounts.relayers[0]!.privateKey], 'broadcast', {}, [
      '--claim-within',
      '2',
      '--settle-within',
      '2',
    ]);
    stops.push(ours.stop);
    const batch = await startBatchReferenceStack(chain, chain.accounts.relayers[1]!.privateKey);
    stops.push(batch.stop);
    const exact = await startReferenceStack(chain, chain.accounts.relayers[2]!.privateKey, true);
    stops.push(exact.stop);
    for (const [role, pid] of Object.entries(ours.pids)) cpuLabels.set(pid, role);
    cpuLabels.set(batch.pid, 'batch reference (server + facilitator)');
    cpuLabels.set(exact.pid, 'exact reference (server + facilitator)');

    // Each stack pays from its own payers: a channel is per payer and server.
    const payers = (stack: number, n: number) => chain.accounts.payers.slice(stack * CLIENTS, stack * CLIENTS + n);
    const runs: Run[] = [];
    const run = seriesOn(name, chain, runs);
    const depositCalls = sizes.warmup + sizes.sequential + sizes.concurrent + 10;
    /** The skill server's own claims and settles, by age: until the payee holds what was answered. */
    const oursSettle = async (target: bigint) => {
      const deadline = Date.now() + 120_000;
      while ((await chain.balanceOf(ours.payTo as `0x${string}`)) < target) {
        if (Date.now() > deadline) throw new Error('our skill server did not claim and settle what it answered within 2 minutes');
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const oursSequential = await run(
      'ours channel, sequential',
      ours.payTo,
      (f) => ourChannelClients(chain, ours.registryUrl, ours.slug, payers(0, 1), depositCalls, f),
      sizes.sequential,
      oursSettle,
      sizes.warmup,
    );
    const batchSequential = await run(
      'batch reference, sequential',
      batch.payTo,
      (f) => batchReferenceClients(chain, batch.resourceUrl, payers(1, 1), depositCalls, f),
      sizes.sequential,
      batch.claimAndSettle,
      sizes.warmup,
    );
    const exactSequential = await run(
      'exact reference, sequential',
      exact.payTo,
      (f) => referenceClients(chain, exact.resourceUrl, payers(2, 1), f),
      sizes.sequential,
      undefined,
      sizes.warmup,
    );

    const oursFrom = await chain.publicClient.getBlockNumber();
    const oursConcurrent = await run(
      `ours channel, ${CLIENTS} clients`,
      ours.payTo,
      (f) => ourChannelClients(chain, ours.registryUrl, ours.slug, payers(0, CLIENTS), sizes.concurrent, f),
      sizes.concurrent,
      oursSettle,
    );
    const oursGas = await channelGas(chain, oursFrom, await chain.publicClient.getBlockNumber());
    const batchFrom = await chain.publicClient.getBlockNumber();
    const batchConcurrent = await run(
      `batch reference, ${CLIENTS} clients`,
      batch.payTo,
      (f) => batchReferenceClients(chain, batch.resourceUrl, payers(1, CLIENTS), sizes.concurrent, f),
      sizes.concurrent,
      batch.claimAndSettle,
    );
    const batchGas = await channelGas(chain, batchFrom, await chain.publicClient.getBlockNumber());
    const exactConcurrent = await run(
      `exact reference, ${CLIENTS} clients`,
      exact.payTo,
      (f) => referenceClients(chain, exact.resourceUrl, payers(2, CLIENTS), f),
      sizes.concurrent,
    );
    return {
      runs,
      ours: { sequential: oursSequential, concurrent: oursConcurrent, gas: oursGas },
      batch: { sequential: batchSequential, concurrent: batchConcurrent, gas: batchGas },
      exact: { sequential: exactSequential, concurrent: exactConcurrent },
    } satisfies ChainResult;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await chain.stop();
  }
}

const ratiosOf = (c: ChainResult) => ({
  p50VsExactReference: c.ours.sequential.p50 / c.exact.sequential.p50,
  p50VsBatchReference: c.ours.sequential.p50 / c.batch.sequential.p50,
  concurrent32VsExactReference: c.ours.concurrent.callsPerSecond / c.exact.concurrent.callsPerSecond,
  concurrent32VsBatchReference: c.ours.concurrent.callsPerSecond / c.batch.concurrent.callsPerSecond,
});

/** Dollars per call for `gas` at Base's 2026 minimum base fee (0.005 gwei) and ETH at $3,000 (L1 data fee not included). */
const dollarsPerCall = (gas: number) => gas * 0.005e-9 * 3000;

async function main() {
  const gate = await benchGate('bench/channels.ts', 'payments.channels');
  const databases = benchDatabases('market_bench_channels');
  try {
    const instant = await benchChain('instant', [], { sequential: CALLS, concurrent: CONCURRENT_CALLS, warmup: WARMUP }, databases.create);
    const blocks = await benchChain(
      '2 s blocks',
      ['--block-time', '2'],
      { sequential: BLOCK_CALLS, concurrent: BLOCK_CONCURRENT_CALLS, warmup: BLOCK_WARMUP },
      databases.create,
    );
    const runs = [...instant.runs, ...blocks.runs];
    printTable(
      `Channel calls (price $0.001), after warm-up calls (the first one the deposit): ${WARMUP} / ${BLOCK_WARMUP} before a sequential series, one per client before ${CLIENTS} clients`,
      ['run', 'calls/s', 'p50 ms', 'p95 ms', 'failed', 'round trips/call'],
      runs.map((r) => [r.label, fmt(r.callsPerSecond, 1), fmt(r.p50, 1), fmt(r.p95, 1), `${r.failures}/${r.calls}`, fmt(r.roundTrips, 2)]),
    );
    const gas = { ours: instant.ours.gas, batchReference: instant.batch.gas };
    printTable(
      `Gas per call, a channel of k calls paying the deposit that opens it and its share of one claim and one settle (${CLIENTS} channels per claim)`,
      [
        'stack',
        'opening deposit',
        'top-up',
        'claim / channel',
        'settle / channel',
        'k = 10',
        'k = 100',
        'k = 1,000',
        '$ / call at k = 100',
      ],
      Object.entries(gas).map(([stack, g]) => [
        stack,
        fmt(g.perDeposit),
        g.perTopUp === null ? '–' : fmt(g.perTopUp),
        fmt(g.perClaimedChannel),
        fmt(g.perSettledChannel),
        fmt(g.gasPerCall.k10),
        fmt(g.gasPerCall.k100),
        fmt(g.gasPerCall.k1000),
        `$${dollarsPerCall(g.gasPerCall.k100).toFixed(7)}`,
      ]),
    );
    const ratios = { instant: ratiosOf(instant), blockTime2s: ratiosOf(blocks) };
    printTable(
      'Ours / reference (p50: lower is better; calls/s: higher is better)',
      ['measure', 'instant', '2 s blocks'],
      Object.keys(ratios.instant).map((k) => [
        k,
        fmt(ratios.instant[k as keyof typeof ratios.instant], 3),
        fmt(ratios.blockTime2s[k as keyof typeof ratios.blockTime2s], 3),
      ]),
    );
    savePart('payments', 'channels', { clients: CLIENTS, gasPerCall: gas.ours.gasPerCall, gas, runs, ratios }, {}, gate);
  } finally {
    await databases.dropAll();
  }
}

await main();
