/**
 * Spending limits in exact atomic micro-USDC. A call reserves its price before anything is
 * signed and settles the reservation when it ends: committed when money moved (or may have
 * moved), released when it certainly did not. Check-and-reserve is synchronous, so concurrent
 * calls can never overshoot the budget together.
 */
import { formatPriceUsd, parsePrice } from '../x402/index';
import { SpendingLimitError } from './errors';
import type { SpendingSnapshot } from './types';

/** A price or limit option (`"$0.01"`, `"0.01"`, `0.01`) as atomic micro-USDC. */
export function readAmount(value: string | number, what: string): bigint {
  try {
    return parsePrice(value);
  } catch (error) {
    throw new TypeError(`${what}: ${(error as Error).message}`);
  }
}

/** One call's hold on the budget; exactly one of commit/release takes effect. */
export interface Reservation {
  readonly amount: bigint;
  /** Spends the amount held, or `charged` when the server confirmed a smaller charge (never more than held). */
  commit(charged?: bigint): void;
  release(): void;
}

export class SpendingLedger {
  private spent = 0n;
  private reserved = 0n;

  constructor(private readonly budget: bigint | undefined) {}

  /**
   * Refuses early, without holding anything, when `amount` is more than what is left (counting
   * `held`, the caller's own reservation, as available to it).
   *
   * @throws SpendingLimitError('budget')
   */
  check(amount: bigint, slug: string, held = 0n): void {
    if (this.budget === undefined) return;
    const remaining = this.budget - this.spent - this.reserved + held;
    if (amount > remaining) {
      throw new SpendingLimitError(
        'budget',
        amount,
        remaining,
        slug,
        `Refused to pay ${slug}: ${formatPriceUsd(amount)} is more than the ${formatPriceUsd(remaining)} left of the ${formatPriceUsd(this.budget)} budget`,
      );
    }
  }

  /**
   * Holds `amount` for a call (check and hold in one synchronous step).
   *
   * @throws SpendingLimitError('budget') when spent + reserved + amount would pass the budget
   */
  reserve(amount: bigint, slug: string): Reservation {
    this.check(amount, slug);
    this.reserved += amount;
    let open = true;
    const settle = (spend: bigint) => {
      if (!open) return;
      open = false;
      this.reserved -= amount;
      this.spent += spend;
    };
    return {
      amount,
      commit: (charged) => settle(charged !== undefined && charged >= 0n && charged < amount ? charged : amount),
      release: () => settle(0n),
    };
  }

  snapshot(): SpendingSnapshot {
    const remaining = this.budget === undefined ? undefined : this.budget - this.spent - this.reserved;
    return { spent: this.spent, reserved: this.reserved, budget: this.budget, remaining };
  }
}

/**
 * The highest price a call may pay: the call's `maxPrice`, never above the client's; without
 * either, the listed price itself (which the 402 terms must match exactly anyway).
 *
 * @throws SpendingLimitError('maxPrice') when the listed price is above the limit
 */
export function checkMaxPrice(price: bigint, slug: string, clientMax: bigint | undefined, callMax: bigint | undefined): void {
  const limit = callMax === undefined ? clientMax : clientMax === undefined ? callMax : callMax < clientMax ? callMax : clientMax;
  if (limit !== undefined && price > limit) {
    throw new SpendingLimitError(
      'maxPrice',
      price,
      limit,
      slug,
      `Refused to pay ${slug}: its price ${formatPriceUsd(price)} is above maxPrice ${formatPriceUsd(limit)}`,
    );
  }
}
