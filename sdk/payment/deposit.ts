/**
 * How much goes into a payment channel: the one deposit policy of every client of the marketplace
 * (SkillMarket and `market call`, `market mcp`, the page's Try it), applied by the channel scheme
 * (channel.ts) when it signs and when it previews a payment.
 *
 * The rule: a deposit is made only when the channel cannot cover this call's price; it is the
 * largest of ten calls' worth at the price, the least deposit the server announces
 * (`extra.minDeposit`), what the channel has been charged so far (so a busy channel's deposits
 * double: k calls take about log2(k / 10) deposits) and what this call needs; it is never above
 * `maxDeposit` (default $1) nor what the budget leaves (the budget counts charges; a deposit larger
 * than what may still be charged would only lock money up).
 *
 * Why: a deposit is the payer's money held for calls to come, refundable, not a payment. A buyer
 * expects it to be small next to the price (ten calls of a $0.001 skill lock a cent) yet to spare
 * a transaction per call; a server that needs a larger float says so and is met; a channel in heavy
 * use tops up less often as it proves useful; and the buyer's own limits always win. The amount is
 * shown before anything is signed (PaidCall's quote) and named apart from the charge in the
 * receipt (`deposit` beside `amount`).
 */

/** Calls' worth one deposit aims to cover. */
export const DEPOSIT_CALLS = 10n;
/** The most one deposit may be unless the client says otherwise, atomic micro-USDC ($1). */
export const DEFAULT_MAX_DEPOSIT = 1_000_000n;
/** A channel is chosen only when the deposit cap covers at least this many calls at the price. */
export const MIN_CHANNEL_CALLS = 3n;

/** What sizes a deposit, in atomic units. */
export interface DepositInput {
  /** This call's price. */
  price: bigint;
  /** The server's announced least deposit (`extra.minDeposit`), if any. */
  minDeposit?: bigint | undefined;
  /** The channel's cumulative charge so far (0 for a new channel). */
  charged: bigint;
  /** What the channel holds (0 for a new channel). */
  balance: bigint;
  /** The most one deposit may be. */
  maxDeposit: bigint;
  /** What the budget leaves for this call, its price included; undefined without a budget. */
  budgetLeft?: bigint | undefined;
  /** Calls' worth to aim for; default {@link DEPOSIT_CALLS}. */
  calls?: bigint;
}

/**
 * The deposit a call makes under the policy: 0n when the channel covers the price, else the amount;
 * `over` when what the call needs is above the cap (nothing can be signed).
 *
 * @example depositFor({ price: 2_000n, charged: 0n, balance: 0n, maxDeposit: 1_000_000n }) // { amount: 20_000n }
 */
export function depositFor(input: DepositInput): { amount: bigint; over?: undefined } | { over: bigint; limit: bigint } {
  const { price, charged, budgetLeft } = input;
  const needed = charged + price - input.balance;
  if (needed <= 0n) return { amount: 0n };
  const limit = budgetLeft !== undefined && budgetLeft < input.maxDeposit ? budgetLeft : input.maxDeposit;
  if (needed > limit) return { over: needed, limit };
  const wanted = [(input.calls ?? DEPOSIT_CALLS) * price, input.minDeposit ?? 0n, charged, needed].reduce((a, b) => (a > b ? a : b));
  return { amount: wanted < limit ? wanted : limit };
}
