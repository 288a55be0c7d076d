/**
 * What x402BatchSettlement and its ERC-3009 deposit collector refuse, each with its custom error:
 * forged or altered vouchers, claims beyond a voucher or the deposit, callers without the role,
 * early or duplicate withdrawals, replayed refund nonces, withdraw delays out of bounds, and
 * deposits whose authorization or collector does not deliver, and collectors that re-enter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import {
  type BaseError,
  ContractFunctionRevertedError,
  type Hex,
  encodeFunctionData,
  numberToHex,
  parseSignature,
  serializeSignature,
  zeroAddress,
} from 'viem';
import {
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  MAX_WITHDRAW_DELAY,
  MIN_WITHDRAW_DELAY,
  batchSettlementAbi,
  erc3009DepositCollectorAbi,
} from '../../../src/chain/batch-settlement';
import {
  type LocalChain,
  channelState,
  claimRow,
  compileContracts,
  openChannel,
  randomNonce,
  settlementRevert,
  settlementTx,
  signClaimBatch,
  signDeposit,
  signRefund,
  signVoucher,
  startChain,
} from '../../support/chain';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
});
afterAll(() => chain.stop());

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The same signature with s' = n − s and the other v: valid for plain ecrecover, malleable. */
function highS(signature: Hex): Hex {
  const { r, s, yParity } = parseSignature(signature);
  return serializeSignature({ r, s: numberToHex(SECP256K1_N - BigInt(s), { size: 32 }), yParity: yParity === 0 ? 1 : 0 });
}

describe('x402BatchSettlement refuses', () => {
  it('vouchers not signed by the payer, altered after signing, or in malleable form', async () => {
    const { payer, receiver, config, channelId } = await openChannel(chain);
    const stranger = await chain.createAccount();
    const refusal = { errorName: 'InvalidVoucherSignature', args: [channelId] };
    const claim = (signature: Hex, amount = 1_000n) =>
      settlementRevert(chain, receiver.address, 'claim', [[claimRow(config, amount, signature, amount)]]);

    expect(await claim(await signVoucher(chain, stranger, config, 1_000n))).toEqual(refusal);
    expect(await claim(await signVoucher(chain, payer, config, 1_000n), 2_000n)).toEqual(refusal);
    expect(await claim(highS(await signVoucher(chain, payer, config, 1_000n)))).toEqual(refusal);
    expect(await claim('0x1234')).toEqual(refusal);
  });

  it('claims above the deposit or above their voucher', async () => {
    const { payer, receiver, config, channelId } = await openChannel(chain, { deposit: 5_000n });
    const big = await signVoucher(chain, payer, config, 8_000n);
    expect(await settlementRevert(chain, receiver.address, 'claim', [[claimRow(config, 8_000n, big, 6_000n)]])).toEqual({
      errorName: 'ClaimExceedsBalance',
      args: [channelId, 6_000n, 5_000n],
    });
    const small = await signVoucher(chain, payer, config, 1_000n);
    expect(await settlementRevert(chain, receiver.address, 'claim', [[claimRow(config, 1_000n, small, 1_001n)]])).toEqual({
      errorName: 'ClaimExceedsVoucher',
      args: [channelId, 1_001n, 1_000n],
    });
  });

  it('direct claims from anyone but the receiver or its authorizer', async () => {
    const { payer, config } = await openChannel(chain);
    const row = claimRow(config, 1_000n, await signVoucher(chain, payer, config, 1_000n), 1_000n);
    expect(await settlementRevert(chain, payer.address, 'claim', [[row]])).toEqual({ errorName: 'Unauthorized', args: [payer.address] });
  });

  it('claim batches not signed by the receiver authorizer, mixing authorizers, or empty', async () => {
    const a = await openChannel(chain);
    const b = await openChannel(chain); // its own receiver authorizer
    const rowA = claimRow(a.config, 1_000n, await signVoucher(chain, a.payer, a.config, 1_000n), 1_000n);
    const rowB = claimRow(b.config, 1_000n, await signVoucher(chain, b.payer, b.config, 1_000n), 1_000n);
    const relayer = chain.accounts.relayer.address;

    const byReceiver = await signClaimBatch(chain, a.receiver, [rowA]);
    expect(await settlementRevert(chain, relayer, 'claimWithSignature', [[rowA], byReceiver])).toEqual({
      errorName: 'InvalidAuthorizerSignature',
      args: [],
    });
    const forOtherRows = await signClaimBatch(chain, a.authorizer, [{ ...rowA, totalClaimed: 500n }]);
    expect(await settlementRevert(chain, relayer, 'claimWithSignature', [[rowA], forOtherRows])).toEqual({
      errorName: 'InvalidAuthorizerSignature',
      args: [],
    });
    const mixed = await signClaimBatch(chain, a.authorizer, [rowA, rowB]);
    expect(await settlementRevert(chain, relayer, 'claimWithSignature', [[rowA, rowB], mixed])).toEqual({
      errorName: 'ReceiverAuthorizerMismatch',
      args: [],
    });
    expect(await settlementRevert(chain, relayer, 'claimWithSignature', [[], await signClaimBatch(chain, a.authorizer, [])])).toEqual({
      errorName: 'EmptyClaims',
      args: [],
    });
  });

  it('finalizing a withdrawal before its delay has passed, to the second', async () => {
    const { payer, config, channelId } = await openChannel(chain);
    const initiated = await settlementTx(chain, payer, 'initiateWithdraw', [config, 4_000n]);
    const initiatedAt = (await chain.publicClient.getBlock({ blockNumber: initiated.blockNumber })).timestamp;
    const readyAt = initiatedAt + BigInt(config.withdrawDelay);
    expect(await settlementRevert(chain, payer.address, 'finalizeWithdraw', [config])).toEqual({
      errorName: 'WithdrawalNotReady',
      args: [channelId, readyAt],
    });

    // Mined one second early the transaction reverts; mined at the deadline it pays out.
    await chain.testClient.setNextBlockTimestamp({ timestamp: readyAt - 1n });
    await expect(settlementTx(chain, payer, 'finalizeWithdraw', [config])).rejects.toThrow('finalizeWithdraw reverted');
    expect((await channelState(chain, config)).withdrawAmount).toBe(4_000n);
    await chain.testClient.setNextBlockTimestamp({ timestamp: readyAt });
    await settlementTx(chain, payer, 'finalizeWithdraw', [config]);
    expect(await channelState(chain, config)).toMatchObject({ balance: 6_000n, withdrawAmount: 0n });
  });

  it('a second withdrawal while one is pending, a finalize without one, one above the unclaimed escrow, and strangers', async () => {
    const { payer, receiver, config, channelId } = await openChannel(chain);
    await settlementTx(chain, receiver, 'claim', [[claimRow(config, 3_000n, await signVoucher(chain, payer, config, 3_000n), 3_000n)]]);
    expect(await settlementRevert(chain, payer.address, 'finalizeWithdraw', [config])).toEqual({
      errorName: 'NoPendingWithdrawal',
      args: [channelId],
    });
    expect(await settlementRevert(chain, payer.address, 'initiateWithdraw', [config, 7_001n])).toEqual({
      errorName: 'AmountExceedsUnclaimed',
      args: [7_001n, 7_000n],
    });
    expect(await settlementRevert(chain, receiver.address, 'initiateWithdraw', [config, 1n])).toEqual({
      errorName: 'Unauthorized',
      args: [receiver.address],
    });
    expect(await settlementRevert(chain, payer.address, 'initiateWithdraw', [config, 0n])).toEqual({ errorName: 'ZeroAmount', args: [] });
    await settlementTx(chain, payer, 'initiateWithdraw', [config, 7_000n]);
    expect(await settlementRevert(chain, payer.address, 'initiateWithdraw', [config, 1n])).toEqual({
      errorName: 'WithdrawalAlreadyPending',
      args: [channelId],
    });
    expect(await settlementRevert(chain, receiver.address, 'finalizeWithdraw', [config])).toEqual({
      errorName: 'Unauthorized',
      args: [receiver.address],
    });
  });

  it('a replayed refund nonce, a refund not signed by the receiver authorizer, and direct refunds by strangers', async () => {
    const { payer, receiver, authorizer, config, channelId } = await openChannel(chain);
    const relayer = chain.accounts.relayer;
    const signature = await signRefund(chain, authorizer, config, 0n, 1_000n);
    await settlementTx(chain, relayer, 'refundWithSignature', [config, 1_000n, 0n, signature]);
    expect(await settlementRevert(chain, relayer.address, 'refundWithSignature', [config, 1_000n, 0n, signature])).toEqual({
      errorName: 'InvalidRefundNonce',
      args: [channelId, 1n, 0n],
    });
    const byReceiver = await signRefund(chain, receiver, config, 1n, 1_000n);
    expect(await settlementRevert(chain, relayer.address, 'refundWithSignature', [config, 1_000n, 1n, byReceiver])).toEqual({
      errorName: 'InvalidAuthorizerSignature',
      args: [],
    });
    const forLess = await signRefund(chain, authorizer, config, 1n, 500n);
    expect(await settlementRevert(chain, relayer.address, 'refundWithSignature', [config, 1_000n, 1n, forLess])).toEqual({
      errorName: 'InvalidAuthorizerSignature',
      args: [],
    });
    expect(await settlementRevert(chain, payer.address, 'refund', [config, 1_000n])).toEqual({
      errorName: 'Unauthorized',
      args: [payer.address],
    });
    expect(await settlementRevert(chain, receiver.address, 'refund', [config, 0n])).toEqual({ errorName: 'ZeroAmount', args: [] });
    expect((await channelState(chain, config)).refundNonce).toBe(1n);
  });

  it('withdraw delays outside 15 minutes to 30 days, and accepts both bounds', async () => {
    for (const withdrawDelay of [MIN_WITHDRAW_DELAY - 1, MAX_WITHDRAW_DELAY + 1, 0]) {
      const { payer, config } = await openChannel(chain, { deposit: 0n, withdrawDelay });
      expect(
        await settlementRevert(chain, chain.accounts.relayer.address, 'deposit', await signDeposit(chain, payer, config, 1_000n)),
      ).toEqual({
        errorName: 'WithdrawDelayOutOfRange',
        args: [withdrawDelay],
      });
    }
    for (const withdrawDelay of [MIN_WITHDRAW_DELAY, MAX_WITHDRAW_DELAY]) {
      const { config } = await openChannel(chain, { deposit: 1_000n, withdrawDelay });
      expect((await channelState(chain, config)).balance).toBe(1_000n);
    }
  });

  it('channels without a receiver authorizer, and empty deposits', async () => {
    const { payer, config } = await openChannel(chain, { deposit: 0n, receiverAuthorizer: zeroAddress });
    const relayer = chain.accounts.relayer.address;
    expect(await settlementRevert(chain, relayer, 'deposit', await signDeposit(chain, payer, config, 1_000n))).toEqual({
      errorName: 'InvalidChannelConfig',
      args: [],
    });
    const open = await openChannel(chain, { deposit: 0n });
    expect(await settlementRevert(chain, relayer, 'deposit', await signDeposit(chain, open.payer, open.config, 0n))).toEqual({
      errorName: 'ZeroAmount',
      args: [],
    });
  });

  it('a deposit authorization used twice, or for another channel', async () => {
    const { payer, config } = await openChannel(chain, { deposit: 0n });
    const args = await signDeposit(chain, payer, config, 1_000n);
    await settlementTx(chain, chain.accounts.relayer, 'deposit', args);
    expect(await settlementRevert(chain, chain.accounts.relayer.address, 'deposit', args)).toEqual({
      errorName: 'Error',
      args: ['FiatTokenV2: authorization is used or canceled'],
    });
    const other = { ...config, salt: randomNonce() };
    expect(await settlementRevert(chain, chain.accounts.relayer.address, 'deposit', [other, args[1], args[2], args[3]])).toEqual({
      errorName: 'Error',
      args: ['FiatTokenV2: invalid signature'],
    });
    expect((await channelState(chain, config)).balance).toBe(1_000n);
  });

  it('a collector that does not deliver the deposit', async () => {
    const { payer, config } = await openChannel(chain, { deposit: 0n });
    const idle = (await chain.createAccount()).address;
    await chain.testClient.setCode({ address: idle, bytecode: '0x00' }); // STOP: every call "succeeds", nothing moves
    const [, amount, , data] = await signDeposit(chain, payer, config, 1_000n);
    expect(await settlementRevert(chain, chain.accounts.relayer.address, 'deposit', [config, amount, idle, data])).toEqual({
      errorName: 'DepositAmountMismatch',
      args: [1_000n, 0n],
    });
  });

  it('a collector that calls back into the settlement contract during a deposit', async () => {
    const { payer, config } = await openChannel(chain, { deposit: 0n });
    const { ReentrantCollector } = await compileContracts();
    const hostile = (await chain.createAccount()).address;
    await chain.testClient.setCode({ address: hostile, bytecode: ReentrantCollector.deployedBytecode });
    const [, amount, , data] = await signDeposit(chain, payer, config, 1_000n);
    const reentries = [
      encodeFunctionData({ abi: batchSettlementAbi, functionName: 'settle', args: [config.receiver, config.token] }),
      encodeFunctionData({ abi: batchSettlementAbi, functionName: 'deposit', args: [config, amount, hostile, data] }),
    ];
    for (const reentry of reentries) {
      const hash = await chain.walletClient(chain.accounts.relayer).writeContract({
        address: hostile,
        abi: ReentrantCollector.abi,
        functionName: 'setReentry',
        args: [reentry],
      });
      await chain.publicClient.waitForTransactionReceipt({ hash });
      expect(await settlementRevert(chain, chain.accounts.relayer.address, 'deposit', [config, amount, hostile, data])).toEqual({
        errorName: 'Reentrancy',
        args: [],
      });
    }
  });

  it('deposit collection called by anyone but the settlement contract', async () => {
    const { payer, config, channelId } = await openChannel(chain, { deposit: 0n });
    const [, amount, , data] = await signDeposit(chain, payer, config, 1_000n);
    const stranger = chain.accounts.relayer.address;
    const reverted = await chain.publicClient
      .simulateContract({
        account: stranger,
        address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
        abi: erc3009DepositCollectorAbi,
        functionName: 'collect',
        args: [payer.address, chain.token.address, amount, channelId, data],
      })
      .then(
        () => undefined,
        (error: BaseError) => error.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError,
      );
    expect(reverted?.data).toMatchObject({ errorName: 'OnlyBatchSettlement', args: [stranger] });
  });
});
