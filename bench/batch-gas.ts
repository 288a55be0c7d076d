/**
 * Gas per payment: one `transferWithAuthorization` per transaction against batches of them in one
 * Multicall3 `aggregate3` transaction (FACILITATOR_BATCH_MAX), through the facilitator itself on
 * an anvil chain with the EIP-3009 test token. Every payment is from its own payer to one creator
 * (a payee already holding USDC, as a skill's creator after its first sale); gas is the relayer's
 * receipts' gasUsed summed over the run, divided by the payments settled. Writes
 * `gasPerPaymentBatchedVsSingle` (largest batch / single) into the payments section of
 * bench/results.json.
 *   npx bun bench/batch-gas.ts   (BENCH_BATCH_PAYMENTS=40)
 */
import type { Hex } from 'viem';
import { startChain, type LocalChain } from '../test/support/chain';
import { PRICE, paymentBody, requirementsFor, startFacilitatorFixture } from '../test/support/facilitator';
import { benchGate } from './lib/quiet';
import { fmt, printTable, savePart } from './lib/results';

const PAYMENTS = Number(process.env.BENCH_BATCH_PAYMENTS ?? 40);
const BATCH_SIZES = [1, 5, 10, 20];

interface GasRun {
  batchSize: number;
  payments: number;
  transactions: number;
  gasPerPayment: number;
}

async function measure(chain: LocalChain, batchSize: number): Promise<GasRun> {
  const f = await startFacilitatorFixture(chain, 'embedded', {
    config: { batchMaxSize: batchSize, batchWaitMs: 5_000, receiptTimeoutMs: 30_000 },
  });
  try {
    const creator = await chain.createAccount();
    await chain.mint(creator.address, PRICE); // a creator paid before: its balance slot is warm on chain
    const payers = await Promise.all(Array.from({ length: PAYMENTS }, () => chain.createAccount({ usdc: PRICE })));
    const bodies = await Promise.all(payers.map((p) => paymentBody(chain, p, requirementsFor(chain, creator.address))));
    for (const body of bodies) if (!(await f.facilitator.verify(body)).isValid) throw new Error('verify refused a bench payment');
    const answers = await Promise.all(bodies.map((b) => f.facilitator.settle(b)));
    const failed = answers.filter((a) => !a.success);
    if (failed.length > 0) throw new Error(`batch ${batchSize}: ${failed.length} settlements failed (${failed[0]?.errorReason})`);
    const hashes = [...new Set(answers.map((a) => a.transaction as Hex))];
    const receipts = await Promise.all(hashes.map((hash) => chain.publicClient.getTransactionReceipt({ hash })));
    const gas = receipts.reduce((sum, r) => sum + r.gasUsed, 0n);
    const moved = (await chain.balanceOf(creator.address)) - PRICE;
    if (moved !== BigInt(PAYMENTS) * PRICE) throw new Error(`batch ${batchSize}: ${PAYMENTS} payments but ${moved} moved`);
    return { batchSize, payments: PAYMENTS, transactions: hashes.length, gasPerPayment: Number(gas) / PAYMENTS };
  } finally {
    await f.close();
  }
}

if (import.meta.main) {
  const gate = await benchGate('bench/batch-gas.ts', 'payments.batchGas');
  const chain = await startChain({ payers: 1, relayers: 1 });
  try {
    const runs: GasRun[] = [];
    for (const size of BATCH_SIZES) runs.push(await measure(chain, size));
    const single = runs[0] as GasRun;
    printTable(
      `Gas per payment, ${PAYMENTS} payments to one creator`,
      ['batch size', 'transactions', 'gas / payment', 'vs single'],
      runs.map((r) => [r.batchSize, r.transactions, fmt(r.gasPerPayment), fmt(r.gasPerPayment / single.gasPerPayment, 3)]),
    );
    const largest = runs[runs.length - 1] as GasRun;
    savePart(
      'payments',
      'batchGas',
      { payments: PAYMENTS, runs },
      { gasPerPaymentBatchedVsSingle: largest.gasPerPayment / single.gasPerPayment },
      gate,
    );
  } finally {
    await chain.stop();
  }
}
