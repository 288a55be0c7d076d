/**
 * The claim window: claim requests queued together go out as one transaction of all their rows
 * (each channel once, at its highest row); when the merged rows would not claim together, each
 * request goes out on its own, so one bad request never sinks another; a full window goes out at once.
 */
import { describe, expect, it } from 'bun:test';
import { zeroAddress, type Hex } from 'viem';
import type { VoucherClaim } from 'skill-market/x402';
import { createClaimBatcher } from '../../../src/facilitator/schemes/channel/claim-batcher';
import { highestPerChannel } from '../../../src/facilitator/schemes/channel/claim-checks';

/** A claim row told apart by its totalClaimed (the batcher never looks inside rows). */
const row = (n: number) => ({ totalClaimed: `${n}` }) as VoucherClaim;
const totals = (claims: readonly VoucherClaim[]) => claims.map((c) => Number(c.totalClaimed));

function recorder(badRows: number[] = []) {
  const sent: number[][] = [];
  const batcher = createClaimBatcher(
    { windowMs: 20, maxRows: 4 },
    async (claims) => (totals(claims).some((n) => badRows.includes(n)) ? 'reverts' : undefined),
    async (claims) => {
      sent.push(totals(claims));
      return `tx${sent.length}`;
    },
  );
  return { sent, batcher };
}

describe('the claim window', () => {
  it('sends the rows of requests queued together in one transaction, each request answered with it', async () => {
    const { sent, batcher } = recorder();
    const answers = await Promise.all([batcher.submit([row(1)]), batcher.submit([row(2), row(3)])]);
    expect(sent).toEqual([[1, 2, 3]]);
    expect(answers).toEqual(['tx1', 'tx1']);
  });

  it('sends each request on its own when the merged rows would not claim together', async () => {
    const { sent, batcher } = recorder([2]);
    const answers = await Promise.all([batcher.submit([row(1)]), batcher.submit([row(2)])]);
    expect(sent.sort()).toEqual([[1], [2]]);
    expect(new Set(answers).size).toBe(2);
  });

  it('sends a full window at once, and a request that would overflow it starts the next one', async () => {
    const { sent, batcher } = recorder();
    const answers = await Promise.all([
      batcher.submit([row(1), row(2), row(3)]),
      batcher.submit([row(4), row(5)]),
      batcher.submit([row(6), row(7)]),
    ]);
    expect(sent).toEqual([
      [1, 2, 3],
      [4, 5, 6, 7],
    ]);
    expect(answers).toEqual(['tx1', 'tx2', 'tx2']);
  });
});

describe('the rows of one claim transaction', () => {
  /** A row of the channel told apart by `salt`, claiming `total`. */
  const of = (salt: number, total: number): VoucherClaim => ({
    voucher: {
      channel: {
        payer: '0x1111111111111111111111111111111111111111',
        payerAuthorizer: zeroAddress,
        receiver: '0x2222222222222222222222222222222222222222',
        receiverAuthorizer: '0x3333333333333333333333333333333333333333',
        token: '0x4444444444444444444444444444444444444444',
        withdrawDelay: 900,
        salt: `0x${salt.toString(16).padStart(64, '0')}` as Hex,
      },
      maxClaimableAmount: `${total}`,
    },
    signature: '0x',
    totalClaimed: `${total}`,
  });

  it('name each channel once, at its highest row, in the order the channels came', () => {
    const merged = highestPerChannel([of(1, 3), of(2, 2), of(1, 5), of(1, 4)], 8453);
    expect(merged.map((c) => [c.voucher.channel.salt.slice(-1), Number(c.totalClaimed)])).toEqual([
      ['1', 5],
      ['2', 2],
    ]);
  });
});
