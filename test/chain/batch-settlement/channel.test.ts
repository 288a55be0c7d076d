/**
 * What x402BatchSettlement does with a channel, driven directly with viem: deposits, claims by
 * the receiver side and by relayed signature, the settle sweep, cooperative refunds with their
 * nonce, timed withdrawals, the channel's open and close events, and multicall.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { encodeFunctionData, parseEventLogs, recoverAddress, zeroAddress } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../../src/chain/batch-settlement';
import {
  type LocalChain,
  chainTime,
  channelState,
  claimRow,
  depositToChannel,
  openChannel,
  receiverState,
  settlementEvents,
  settlementRevert,
  settlementTx,
  signClaimBatch,
  signRefund,
  signVoucher,
  startChain,
  usdCoinAbi,
} from '../../support/chain';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
});
afterAll(() => chain.stop());

const relayer = () => chain.accounts.relayer;
const settlement = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;

describe('x402BatchSettlement channels', () => {
  it('opens a channel on the first deposit and adds later deposits to it', async () => {
    const { payer, config, channelId } = await openChannel(chain, { deposit: 0n });
    const held = await chain.balanceOf(BATCH_SETTLEMENT_ADDRESS);
    expect(settlementEvents(await depositToChannel(chain, payer, config, 10_000n))).toEqual([
      ['ChannelCreated', { channelId, config }],
      ['Deposited', { channelId, sender: relayer().address, amount: 10_000n, balance: 10_000n }],
    ]);
    expect(settlementEvents(await depositToChannel(chain, payer, config, 5_000n))).toEqual([
      ['Deposited', { channelId, sender: relayer().address, amount: 5_000n, balance: 15_000n }],
    ]);
    expect(await channelState(chain, config)).toMatchObject({ channelId, balance: 15_000n, totalClaimed: 0n });
    expect(await chain.balanceOf(payer.address)).toBe(1_000_000n - 15_000n);
    expect(await chain.balanceOf(BATCH_SETTLEMENT_ADDRESS)).toBe(held + 15_000n);
    expect(await chain.publicClient.readContract({ ...settlement, functionName: 'getChannelId', args: [config] })).toBe(channelId);
  });

  it('claims vouchers signed by the payer authorizer key, on a call by the receiver or by its authorizer', async () => {
    const voucherKey = await chain.createAccount();
    const { payer, receiver, authorizer, config, channelId } = await openChannel(chain, { payerAuthorizer: voucherKey.address });
    const voucher = await signVoucher(chain, voucherKey, config, 6_000n);

    const first = await settlementTx(chain, receiver, 'claim', [[claimRow(config, 6_000n, voucher, 4_000n)]]);
    expect(settlementEvents(first)).toEqual([['Claimed', { channelId, sender: receiver.address, amount: 4_000n, totalClaimed: 4_000n }]]);
    const second = await settlementTx(chain, authorizer, 'claim', [[claimRow(config, 6_000n, voucher, 6_000n)]]);
    expect(settlementEvents(second)).toEqual([
      ['Claimed', { channelId, sender: authorizer.address, amount: 2_000n, totalClaimed: 6_000n }],
    ]);
    expect(await channelState(chain, config)).toMatchObject({ balance: 10_000n, totalClaimed: 6_000n });
    expect(await receiverState(chain, receiver.address)).toEqual({ totalClaimed: 6_000n, totalSettled: 0n });

    // With a payer authorizer set, only that key counts: the payer's own signature does not.
    const byPayer = await signVoucher(chain, payer, config, 8_000n);
    expect(await settlementRevert(chain, receiver.address, 'claim', [[claimRow(config, 8_000n, byPayer, 8_000n)]])).toEqual({
      errorName: 'InvalidVoucherSignature',
      args: [channelId],
    });
  });

  it('checks the vouchers of a smart-wallet payer with ERC-1271 when no payer authorizer is set', async () => {
    const { address: wallet, owner } = chain.smartWallet;
    const { receiver, config, channelId } = await openChannel(chain, { deposit: 0n, payer: wallet, payerAuthorizer: zeroAddress });
    await depositToChannel(chain, owner, config, 3_000n);
    const voucher = await signVoucher(chain, owner, config, 2_000n);
    const claimed = await settlementTx(chain, receiver, 'claim', [[claimRow(config, 2_000n, voucher, 2_000n)]]);
    expect(settlementEvents(claimed)).toEqual([['Claimed', { channelId, sender: receiver.address, amount: 2_000n, totalClaimed: 2_000n }]]);
  });

  it('claims many channels in one relayed claimWithSignature; replaying it, or a stale row, changes nothing', async () => {
    const a = await openChannel(chain);
    const shared = { receiver: a.receiver, authorizer: a.authorizer };
    const b = await openChannel(chain, shared);
    const c = await openChannel(chain, shared);
    const rows = await Promise.all(
      [a, b, c].map(async ({ payer, config }, i) => {
        const amount = BigInt(1_000 * (i + 1));
        return claimRow(config, amount, await signVoucher(chain, payer, config, amount), amount);
      }),
    );
    const signature = await signClaimBatch(chain, a.authorizer, rows);

    const claimed = await settlementTx(chain, relayer(), 'claimWithSignature', [rows, signature]);
    expect(settlementEvents(claimed)).toEqual(
      [a, b, c].map(({ channelId }, i) => [
        'Claimed',
        { channelId, sender: relayer().address, amount: BigInt(1_000 * (i + 1)), totalClaimed: BigInt(1_000 * (i + 1)) },
      ]),
    );
    expect(await receiverState(chain, a.receiver.address)).toEqual({ totalClaimed: 6_000n, totalSettled: 0n });
    const digest = await chain.publicClient.readContract({ ...settlement, functionName: 'getClaimBatchDigest', args: [rows] });
    expect(await recoverAddress({ hash: digest, signature })).toBe(a.authorizer.address);

    expect(settlementEvents(await settlementTx(chain, relayer(), 'claimWithSignature', [rows, signature]))).toEqual([]);
    const stale = [claimRow(a.config, 1_000n, rows[0]!.signature, 500n)];
    expect(
      settlementEvents(
        await settlementTx(chain, relayer(), 'claimWithSignature', [stale, await signClaimBatch(chain, a.authorizer, stale)]),
      ),
    ).toEqual([]);
    expect(await receiverState(chain, a.receiver.address)).toEqual({ totalClaimed: 6_000n, totalSettled: 0n });
    expect((await channelState(chain, a.config)).totalClaimed).toBe(1_000n);
  });

  it('hands out the EIP-712 digests that payers and receiver authorizers sign', async () => {
    const { payer, authorizer, config, channelId } = await openChannel(chain, { deposit: 0n });
    const voucherDigest = await chain.publicClient.readContract({ ...settlement, functionName: 'getVoucherDigest', args: [channelId, 7n] });
    expect(await recoverAddress({ hash: voucherDigest, signature: await signVoucher(chain, payer, config, 7n) })).toBe(payer.address);
    const refundDigest = await chain.publicClient.readContract({
      ...settlement,
      functionName: 'getRefundDigest',
      args: [channelId, 3n, 9n],
    });
    expect(await recoverAddress({ hash: refundDigest, signature: await signRefund(chain, authorizer, config, 3n, 9n) })).toBe(
      authorizer.address,
    );
  });

  it('settles everything claimed for a receiver across channels in one transfer; with nothing new it does nothing', async () => {
    const a = await openChannel(chain);
    const b = await openChannel(chain, { receiver: a.receiver, authorizer: a.authorizer });
    for (const [{ payer, config }, amount] of [
      [a, 2_500n],
      [b, 4_000n],
    ] as const) {
      await settlementTx(chain, a.receiver, 'claim', [[claimRow(config, amount, await signVoucher(chain, payer, config, amount), amount)]]);
    }
    const settled = await settlementTx(chain, relayer(), 'settle', [a.receiver.address, chain.token.address]);
    expect(settlementEvents(settled)).toEqual([
      ['Settled', { receiver: a.receiver.address, token: chain.token.address, sender: relayer().address, amount: 6_500n }],
    ]);
    expect(parseEventLogs({ abi: usdCoinAbi, eventName: 'Transfer', logs: settled.logs }).map((l) => l.args)).toEqual([
      { from: BATCH_SETTLEMENT_ADDRESS, to: a.receiver.address, value: 6_500n },
    ]);
    expect(await chain.balanceOf(a.receiver.address)).toBe(6_500n);
    expect((await settlementTx(chain, relayer(), 'settle', [a.receiver.address, chain.token.address])).logs).toEqual([]);
    expect(await receiverState(chain, a.receiver.address)).toEqual({ totalClaimed: 6_500n, totalSettled: 6_500n });
  });

  it('refunds directly: the refund nonce advances even when nothing is left, which voids older refund signatures', async () => {
    const { payer, receiver, authorizer, config, channelId } = await openChannel(chain);
    await settlementTx(chain, receiver, 'claim', [[claimRow(config, 4_000n, await signVoucher(chain, payer, config, 4_000n), 4_000n)]]);
    const presigned = await signRefund(chain, authorizer, config, 0n, 1_000n);
    const before = await chain.balanceOf(payer.address);

    const refunded = await settlementTx(chain, receiver, 'refund', [config, 10_000n]); // capped to the 6,000 unclaimed
    expect(settlementEvents(refunded)).toEqual([['Refunded', { channelId, sender: receiver.address, amount: 6_000n }]]);
    expect(await chain.balanceOf(payer.address)).toBe(before + 6_000n);
    expect(await channelState(chain, config)).toMatchObject({ balance: 4_000n, totalClaimed: 4_000n, refundNonce: 1n });

    expect((await settlementTx(chain, authorizer, 'refund', [config, 1n])).logs).toEqual([]);
    expect((await channelState(chain, config)).refundNonce).toBe(2n);
    expect(await settlementRevert(chain, relayer().address, 'refundWithSignature', [config, 1_000n, 0n, presigned])).toEqual({
      errorName: 'InvalidRefundNonce',
      args: [channelId, 2n, 0n],
    });
  });

  it('refunds on a relayed receiver-authorizer signature for the current nonce', async () => {
    const { payer, authorizer, config, channelId } = await openChannel(chain);
    const before = await chain.balanceOf(payer.address);
    const signature = await signRefund(chain, authorizer, config, 0n, 3_000n);
    const refunded = await settlementTx(chain, relayer(), 'refundWithSignature', [config, 3_000n, 0n, signature]);
    expect(settlementEvents(refunded)).toEqual([['Refunded', { channelId, sender: relayer().address, amount: 3_000n }]]);
    expect(await channelState(chain, config)).toMatchObject({ balance: 7_000n, refundNonce: 1n });
    expect(await chain.balanceOf(payer.address)).toBe(before + 3_000n);
  });

  it('shrinks a pending withdrawal by a refund, and cancels it when a refund covers it', async () => {
    const { payer, receiver, config } = await openChannel(chain);
    await settlementTx(chain, payer, 'initiateWithdraw', [config, 6_000n]);
    const initiatedAt = Number(await chainTime(chain));
    await settlementTx(chain, receiver, 'refund', [config, 2_000n]);
    expect(await channelState(chain, config)).toMatchObject({ balance: 8_000n, withdrawAmount: 4_000n, withdrawInitiatedAt: initiatedAt });
    await settlementTx(chain, receiver, 'refund', [config, 5_000n]);
    expect(await channelState(chain, config)).toMatchObject({ balance: 3_000n, withdrawAmount: 0n, withdrawInitiatedAt: 0 });
  });

  it('closes a channel emptied with nothing claimed, by withdrawal or by refund, and a new deposit opens it again', async () => {
    const voucherKey = await chain.createAccount();
    const { payer, receiver, config, channelId } = await openChannel(chain, { deposit: 5_000n, payerAuthorizer: voucherKey.address });
    // The payer authorizer may run the withdrawal too; the payout goes to the payer.
    await settlementTx(chain, voucherKey, 'initiateWithdraw', [config, 5_000n]);
    await chain.testClient.increaseTime({ seconds: config.withdrawDelay });
    await chain.testClient.mine({ blocks: 1 });
    const before = await chain.balanceOf(payer.address);
    const finalized = await settlementTx(chain, voucherKey, 'finalizeWithdraw', [config]);
    expect(settlementEvents(finalized)).toEqual([
      ['WithdrawFinalized', { channelId, sender: voucherKey.address, amount: 5_000n }],
      ['ChannelClosed', { channelId, config }],
    ]);
    expect(await chain.balanceOf(payer.address)).toBe(before + 5_000n);
    expect(await channelState(chain, config)).toMatchObject({ balance: 0n, totalClaimed: 0n, withdrawAmount: 0n });

    expect(settlementEvents(await depositToChannel(chain, payer, config, 2_000n))[0]).toEqual(['ChannelCreated', { channelId, config }]);
    expect(settlementEvents(await settlementTx(chain, receiver, 'refund', [config, 2_000n]))).toEqual([
      ['Refunded', { channelId, sender: receiver.address, amount: 2_000n }],
      ['ChannelClosed', { channelId, config }],
    ]);
  });

  it('runs calls in order in a multicall, and reverts all of them with the first failure', async () => {
    const { payer, receiver, config, channelId } = await openChannel(chain);
    const voucher = await signVoucher(chain, payer, config, 1_000n);
    const claim = encodeFunctionData({
      abi: batchSettlementAbi,
      functionName: 'claim',
      args: [[claimRow(config, 1_000n, voucher, 1_000n)]],
    });
    const refund = encodeFunctionData({ abi: batchSettlementAbi, functionName: 'refund', args: [config, 500n] });
    const withdraw = encodeFunctionData({ abi: batchSettlementAbi, functionName: 'initiateWithdraw', args: [config, 1n] });

    expect(await settlementRevert(chain, receiver.address, 'multicall', [[claim, refund, withdraw]])).toEqual({
      errorName: 'Unauthorized',
      args: [receiver.address],
    });
    expect(await channelState(chain, config)).toMatchObject({ totalClaimed: 0n, refundNonce: 0n });

    const done = await settlementTx(chain, receiver, 'multicall', [[claim, refund]]);
    expect(settlementEvents(done)).toEqual([
      ['Claimed', { channelId, sender: receiver.address, amount: 1_000n, totalClaimed: 1_000n }],
      ['Refunded', { channelId, sender: receiver.address, amount: 500n }],
    ]);
  });
});
