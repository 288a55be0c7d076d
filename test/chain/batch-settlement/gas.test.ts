/**
 * Gas of the channel operations, from anvil receipts, held under ceilings near what x402's own
 * contract reports (its forge snapshot: deposit via ERC-3009 ≈ 111.7k, claim of 1 ≈ 40.3k, claim of
 * 10 channels ≈ 192k, settle ≈ 31.2k, refund ≈ 43.9k, all without the 21k intrinsic gas). Compared
 * here as execution gas: the receipt's gasUsed less 21,000 and the calldata's 4/16 gas per byte.
 * GAS_REPORT=1 prints the table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type Hex, type TransactionReceipt, hexToBytes } from 'viem';
import {
  type LocalChain,
  type OpenChannel,
  type ClaimRow,
  claimRow,
  depositToChannel,
  openChannel,
  settlementTx,
  signClaimBatch,
  signRefund,
  signVoucher,
  startChain,
} from '../../support/chain';

let chain: LocalChain;
const report: Record<string, { gasUsed: bigint; execution: bigint }> = {};
beforeAll(async () => {
  chain = await startChain();
});
afterAll(async () => {
  if (process.env.GAS_REPORT) console.table(report);
  await chain.stop();
});

/** Execution gas of a mined transaction: gasUsed − intrinsic 21,000 − calldata (4 per zero byte, 16 per other). */
async function measure(name: string, receipt: TransactionReceipt): Promise<bigint> {
  const { input } = await chain.publicClient.getTransaction({ hash: receipt.transactionHash });
  const calldata = hexToBytes(input as Hex).reduce((sum, byte) => sum + (byte === 0 ? 4n : 16n), 0n);
  const execution = receipt.gasUsed - 21_000n - calldata;
  report[name] = { gasUsed: receipt.gasUsed, execution };
  return execution;
}

async function claimWithSignature(channels: OpenChannel[], amount: bigint): Promise<TransactionReceipt> {
  const rows: ClaimRow[] = await Promise.all(
    channels.map(async ({ payer, config }) => claimRow(config, amount, await signVoucher(chain, payer, config, amount), amount)),
  );
  return settlementTx(chain, chain.accounts.relayer, 'claimWithSignature', [
    rows,
    await signClaimBatch(chain, channels[0]!.authorizer, rows),
  ]);
}

describe('x402BatchSettlement gas', () => {
  let first: OpenChannel;
  let channels: OpenChannel[];

  beforeAll(async () => {
    // One receiver with eleven channels, as a seller with many buyers has; the contract already
    // holds USDC and the receiver has claimed and settled before (the steady state).
    first = await openChannel(chain, { deposit: 0n });
    const shared = { receiver: first.receiver, authorizer: first.authorizer };
    channels = [first, ...(await Promise.all(Array.from({ length: 10 }, () => openChannel(chain, { ...shared, deposit: 0n }))))];
    const warm = await openChannel(chain, shared);
    await claimWithSignature([warm], 1_000n);
    await settlementTx(chain, chain.accounts.relayer, 'settle', [first.config.receiver, chain.token.address]);
  });

  it('deposits through the ERC-3009 collector within 10% of the reference contract', async () => {
    for (const { payer, config } of channels.slice(1)) await depositToChannel(chain, payer, config, 100_000n);
    const execution = await measure('deposit (ERC-3009, new channel)', await depositToChannel(chain, first.payer, first.config, 100_000n));
    const topUp = await measure('deposit (ERC-3009, top-up)', await depositToChannel(chain, first.payer, first.config, 50_000n));
    expect(execution).toBeLessThan(123_000n);
    expect(topUp).toBeLessThan(execution);
  });

  it('claims 1 channel, and 10 channels in one claimWithSignature, at no more per channel than the reference', async () => {
    const one = await measure('claimWithSignature (1 channel)', await claimWithSignature([first], 10_000n));
    const ten = await measure('claimWithSignature (10 channels)', await claimWithSignature(channels.slice(1), 10_000n));
    expect(one).toBeLessThan(45_000n);
    expect(ten).toBeLessThan(192_000n);
  });

  it('settles a receiver and refunds within 10% of the reference (a first refund also creates its nonce slot)', async () => {
    const settle = await measure(
      'settle (11 channels swept)',
      await settlementTx(chain, chain.accounts.relayer, 'settle', [first.config.receiver, chain.token.address]),
    );
    const { authorizer, config } = first;
    const refundWithSignature = async (nonce: bigint) =>
      settlementTx(chain, chain.accounts.relayer, 'refundWithSignature', [
        config,
        5_000n,
        nonce,
        await signRefund(chain, authorizer, config, nonce, 5_000n),
      ]);
    // A channel's first refund writes its refund nonce slot for the first time (a fresh 22.1k store).
    const firstRefund = await measure('refundWithSignature (first of the channel)', await refundWithSignature(0n));
    const refund = await measure('refundWithSignature (later)', await refundWithSignature(1n));
    await measure('refund (direct, by the receiver)', await settlementTx(chain, first.receiver, 'refund', [config, 5_000n]));
    expect(settle).toBeLessThan(34_500n);
    expect(refund).toBeLessThan(48_500n);
    expect(firstRefund).toBeLessThan(refund + 17_100n + 1_000n); // the fresh slot costs 17.1k more than an update
  });
});
