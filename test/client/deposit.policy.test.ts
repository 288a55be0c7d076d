/**
 * The one deposit policy (sdk/payment/deposit.ts), as every client applies it: ten calls' worth,
 * at least the server's announced minDeposit, as much as a busy channel used, at least what the
 * call needs, never above maxDeposit nor what the budget leaves, and nothing when the channel
 * covers the price.
 */
import { describe, expect, it } from 'bun:test';
import { depositFor } from 'skill-market/client';

const PRICE = 1_000n; // $0.001
const fresh = { price: PRICE, charged: 0n, balance: 0n };

describe('depositFor', () => {
  it('opens a channel with ten calls’ worth at the price, capped at $1 by default', () => {
    expect(depositFor(fresh)).toBe(10n * PRICE);
    expect(depositFor({ ...fresh, price: 250_000n })).toBe(1_000_000n);
  });

  it('meets the server’s announced minDeposit when it is more, and ignores it when it is less', () => {
    expect(depositFor({ ...fresh, minDeposit: 15_000n })).toBe(15_000n);
    expect(depositFor({ ...fresh, minDeposit: 5_000n })).toBe(10n * PRICE);
  });

  it('deposits nothing while the channel covers the price, and tops up as much as a busy channel used', () => {
    expect(depositFor({ ...fresh, charged: 9n * PRICE, balance: 10n * PRICE })).toBe(0n);
    // Ten calls used up: the next deposit is ten more calls' worth.
    expect(depositFor({ ...fresh, charged: 10n * PRICE, balance: 10n * PRICE })).toBe(10n * PRICE);
    // Forty calls charged on a channel holding forty: the top-up doubles it.
    expect(depositFor({ ...fresh, charged: 40n * PRICE, balance: 40n * PRICE })).toBe(40n * PRICE);
  });

  it('deposits at least what the call needs', () => {
    expect(depositFor({ ...fresh, price: 7_000n, calls: 1n, charged: 0n, balance: 2_000n })).toBe(7_000n);
    expect(depositFor({ ...fresh, calls: 1n, charged: 3n * PRICE, balance: 3n * PRICE })).toBe(3n * PRICE);
  });

  it('never deposits above maxDeposit nor what the budget leaves', () => {
    expect(depositFor({ ...fresh, minDeposit: 50_000n, maxDeposit: 20_000n })).toBe(20_000n);
    expect(depositFor({ ...fresh, budgetLeft: 4n * PRICE })).toBe(4n * PRICE);
    expect(depositFor({ ...fresh, budgetLeft: 30_000n, maxDeposit: 20_000n, minDeposit: 50_000n })).toBe(20_000n);
  });

  it('names the cap when what the call needs is above it: nothing can be signed', () => {
    expect(() => depositFor({ ...fresh, price: 3_000n, maxDeposit: 2_000n })).toThrow(
      expect.objectContaining({
        code: 'max_deposit_exceeded',
        charged: 'no',
        message: expect.stringContaining('3000 is needed, above the 2000'),
      }),
    );
    expect(() => depositFor({ ...fresh, budgetLeft: PRICE / 2n })).toThrow(expect.objectContaining({ code: 'max_deposit_exceeded' }));
  });
});
