/**
 * A paid call under the owner's limits. Every limit is checked on the fresh listing before
 * anything is signed, in this order: a wallet, the allow-list, the input schema, the per-call
 * maximum, the confirmation threshold, then the period budget (reserved in the persisted
 * ledger). Only then does the consumer SDK run the x402 exchange, capped at the listed price so
 * a price raised in between is refused by the SDK too. The reservation is settled from what the
 * SDK says about the money: spent when it moved or may have, released when it certainly did not.
 */
import type { Address } from 'viem';
import { MarketError, PaidCallError, type PaymentReceipt, ReceiptError, type Skill, type SkillMarket } from 'skill-market/client';
import { checkInput } from 'skill-market/client';
import { formatPriceUsd } from 'skill-market/x402';
import type { BudgetPeriod, Limits } from './config';
import { BudgetRefusal, type CallRecord, type PersistentBudget } from './ledger';

const PERIOD_ADJECTIVE: Record<BudgetPeriod, string> = { hour: 'hourly', day: 'daily', week: 'weekly', month: 'monthly' };

/** A call refused or failed; `message` is written for the model and the user reading it. */
export class ToolFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}

export interface PaidResult {
  result: unknown;
  receipt: Pick<
    PaymentReceipt,
    'transaction' | 'amount' | 'deposit' | 'price' | 'usageBased' | 'network' | 'payTo' | 'payer' | 'scheme' | 'channelId'
  > | null;
  skill: Skill;
}

export class Payments {
  constructor(
    private readonly market: SkillMarket,
    private readonly budget: PersistentBudget,
    private readonly limits: Limits,
    /** How to add a wallet, for discovery-only mode. */
    private readonly noWallet: string | undefined,
  ) {}

  get payer(): Address | undefined {
    return this.market.address;
  }

  async call(slug: string, input: unknown): Promise<PaidResult> {
    if (!this.market.address) {
      throw new ToolFailure(
        'wallet_required',
        `This server runs in discovery-only mode (${this.noWallet ?? 'no wallet'}). Searching and reading skills works; to call paid skills, give market mcp a wallet and restart it.`,
      );
    }
    const skill = await this.market.info(slug);
    await this.checkLimits(skill, input);
    const price = BigInt(skill.priceAtomic);
    let reservation: string;
    try {
      reservation = await this.budget.reserve(price, slug);
    } catch (error) {
      if (!(error instanceof BudgetRefusal)) throw error;
      const s = error.snapshot;
      throw new ToolFailure(
        'budget_exceeded',
        `Refused: ${slug} costs ${skill.price} but only ${formatPriceUsd(s.remaining)} is left of the ${formatPriceUsd(s.budget)} ${PERIOD_ADJECTIVE[s.period]} budget (spent ${formatPriceUsd(s.spent)}; resets ${s.periodEnd.toISOString()}). Nothing was paid. The user can raise it with MARKET_MCP_BUDGET or --budget.`,
        { price: skill.priceAtomic, remaining: s.remaining.toString(), budget: s.budget.toString(), resetsAt: s.periodEnd.toISOString() },
      );
    }
    try {
      // A channel deposit is never above what the period's budget leaves for this call (the deposit policy's budget cap).
      const left = (await this.budget.snapshot()).remaining + price;
      const { result, receipt } = await this.market.callWithReceipt(slug, input, {
        maxPrice: skill.price,
        budgetLeft: formatPriceUsd(left),
      });
      await this.budget.settle(reservation, receipt ? record(receipt, 'yes') : undefined);
      return { result, receipt: receipt && short(receipt), skill };
    } catch (error) {
      const charged = error instanceof MarketError ? error.charged : 'unknown';
      const receipt = error instanceof PaidCallError ? error.receipt : undefined;
      // Anything but a certain "not charged" counts as spent: the budget must never overshoot.
      const spent = charged === 'no' ? undefined : receipt ? record(receipt, charged) : { ...blankRecord(slug, price), charged };
      if (spent) spent.error = (error as Error).message;
      await this.budget.settle(reservation, spent);
      if (error instanceof MarketError) {
        const money =
          charged === 'no'
            ? 'Nothing was paid.'
            : charged === 'yes'
              ? 'The payment went through.'
              : 'The payment may have gone through; it counts against the budget.';
        // Paid, but its signed receipt was refused: the result still goes to the agent, flagged.
        const kept = error instanceof ReceiptError ? { result: error.result.result } : {};
        const told = error instanceof ReceiptError ? ' The skill’s result is in `error.result`; its receipt did not check out.' : '';
        throw new ToolFailure(error.code, `${error.message}. ${money}${told}`, {
          charged,
          ...(receipt ? { receipt: short(receipt) } : {}),
          ...kept,
        });
      }
      throw error;
    }
  }

  /** The owner's limits that need only the listing; each refusal says how the user can change it. */
  private async checkLimits(skill: Skill, input: unknown): Promise<void> {
    const { allow, maxPrice, confirmAbove } = this.limits;
    const creator = skill.creatorAddress?.toLowerCase();
    if (allow && !allow.has(skill.slug.toLowerCase()) && !(creator && allow.has(creator))) {
      throw new ToolFailure(
        'not_allowed',
        `Refused: ${skill.slug} is not on this server's allow-list (skills or creators the owner allowed). Nothing was paid. The user can add "${skill.slug}"${creator ? ` or its creator ${creator}` : ''} to MARKET_MCP_ALLOW or --allow.`,
      );
    }
    await checkInput(skill, JSON.stringify(input ?? {}));
    const price = BigInt(skill.priceAtomic);
    if (price > maxPrice) {
      throw new ToolFailure(
        'max_price_exceeded',
        `Refused: ${skill.slug} costs ${skill.price}, above the per-call maximum of ${formatPriceUsd(maxPrice)}. Nothing was paid. The user can raise it with MARKET_MCP_MAX_PRICE or --max-price.`,
        { price: skill.priceAtomic, maxPrice: maxPrice.toString() },
      );
    }
    if (confirmAbove !== undefined && price > confirmAbove) {
      throw new ToolFailure(
        'confirmation_required',
        `Refused: ${skill.slug} costs ${skill.price}, above the ${formatPriceUsd(confirmAbove)} the owner lets this agent spend on one call without asking. Nothing was paid. Ask the user to confirm; to allow it they raise MARKET_MCP_CONFIRM_ABOVE (or --confirm-above) to at least ${skill.price} and restart the server.`,
        { price: skill.priceAtomic, confirmAbove: confirmAbove.toString() },
      );
    }
  }
}

function short(receipt: PaymentReceipt): NonNullable<PaidResult['receipt']> {
  return {
    transaction: receipt.transaction,
    amount: receipt.amount,
    ...(receipt.deposit ? { deposit: receipt.deposit } : {}),
    price: receipt.price,
    ...(receipt.usageBased ? { usageBased: true as const } : {}),
    network: receipt.network,
    payTo: receipt.payTo,
    payer: receipt.payer,
    scheme: receipt.scheme,
    ...(receipt.channelId ? { channelId: receipt.channelId } : {}),
  };
}

function record(receipt: PaymentReceipt, charged: 'yes' | 'unknown'): CallRecord {
  return {
    at: new Date().toISOString(),
    slug: receipt.slug,
    amount: receipt.amount,
    charged,
    transaction: receipt.transaction,
    network: receipt.network,
    payTo: receipt.payTo,
    payer: receipt.payer,
  };
}

function blankRecord(slug: string, amount: bigint): CallRecord {
  return {
    at: new Date().toISOString(),
    slug,
    amount: amount.toString(),
    charged: 'unknown',
    transaction: null,
    network: null,
    payTo: null,
    payer: null,
  };
}
