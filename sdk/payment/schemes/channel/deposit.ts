import { MarketError } from '../../../http/errors';

/** Calls' worth one deposit aims to cover. */
export const DEPOSIT_CALLS = 10n;
/** The default most one deposit may be: $1 in atomic micro-USDC. */
export const DEFAULT_MAX_DEPOSIT = 1_000_000n;

/** Atomic units; `charged` and `balance` are the channel's (0 for a new one), `budgetLeft` includes the price. */
export interface DepositInput {
  price: bigint;
  /** The server's `extra.minDeposit`. */
  minDeposit?: bigint | undefined;
  charged: bigint;
  balance: bigint;
  /** Default {@link DEFAULT_MAX_DEPOSIT}. */
  maxDeposit?: bigint | undefined;
  budgetLeft?: bigint | undefined;
  /** Default {@link DEPOSIT_CALLS}. */
  calls?: bigint;
}

/**
 * The one deposit policy of every client (SkillMarket, `market call`, `market mcp`, Try it): none
 * while the channel covers the price; else the most of ten calls' worth, the server's minDeposit,
 * what the channel was charged so far (busy channels double) and what the call needs; never above
 * maxDeposit nor what the budget leaves. Why: a buyer expects refundable escrow small next to the
 * price (ten $0.001 calls lock a cent) yet sparing a transaction per call, a server's stated need
 * met, and their own limits to win.
 *
 * @example depositFor({ price: 1_000n, charged: 0n, balance: 0n }) // 10_000n: ten calls' worth
 * @throws MarketError('max_deposit_exceeded') when the call needs more than the caps allow
 */
export function depositFor(input: DepositInput): bigint {
  const { price, charged, budgetLeft, maxDeposit = DEFAULT_MAX_DEPOSIT } = input;
  const needed = charged + price - input.balance;
  if (needed <= 0n) return 0n;
  const cap = budgetLeft !== undefined && budgetLeft < maxDeposit ? budgetLeft : maxDeposit;
  if (needed > cap)
    throw new MarketError('max_deposit_exceeded', `a deposit of ${needed} is needed, above the ${cap} allowed (maxDeposit, budget)`, {
      charged: 'no',
    });
  const amount = [(input.calls ?? DEPOSIT_CALLS) * price, input.minDeposit ?? 0n, charged, needed].reduce((a, b) => (a > b ? a : b));
  return amount < cap ? amount : cap;
}
