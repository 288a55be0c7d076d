/**
 * What a paid call adds to the payer's history (`usageRecordOf`): a transfer names its transaction,
 * a channel call its channel and cumulative charge with what this call was charged (less than the
 * price when the server charged less), and a call charged nothing adds nothing.
 */
import { describe, expect, it } from 'bun:test';
import { type PaymentReceipt, usageRecordOf } from 'skill-market/client';

const base: PaymentReceipt = {
  skillId: '00000000-0000-4000-8000-000000000001',
  slug: 'week',
  transaction: `0x${'ab'.repeat(32)}`,
  amount: '7000',
  price: '$0.007',
  payTo: `0x${'11'.repeat(20)}`,
  network: 'eip155:84532',
  asset: `0x${'22'.repeat(20)}`,
  payer: `0x${'33'.repeat(20)}`,
  nonce: `0x${'cd'.repeat(32)}`,
  scheme: 'exact',
};

describe('usageRecordOf', () => {
  it('names a transfer by its transaction, for the amount paid', () => {
    expect(usageRecordOf(base)).toEqual({ skillId: base.skillId, amountAtomic: '7000', paymentRef: base.transaction! });
  });

  it("names a channel call by its channel and cumulative charge, for this call's charge", () => {
    const channelId = `0x${'ee'.repeat(32)}` as const;
    const receipt = { ...base, scheme: 'batch-settlement', transaction: null, amount: '3000', channelId, chargedCumulativeAmount: '9000' };
    expect(usageRecordOf(receipt)).toEqual({ skillId: base.skillId, amountAtomic: '3000', channelId, chargedCumulativeAmount: '9000' });
  });

  it('adds nothing for a call charged nothing', () => {
    expect(usageRecordOf({ ...base, scheme: 'upto', amount: '0' })).toBeUndefined();
  });
});
