import { eq } from 'drizzle-orm';
import { skills } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { priceToAtomic } from '../skills';
import type { ReportedPayment } from 'skill-market/registry';
import { nominatePayment } from './store';

/**
 * A payment reported by another SDK's client without a credential: nothing is believed until
 * the chain confirms it, so all this does is queue the transaction for a check against the
 * skill's listing. The amount must be the listed price (a mistaken client is told so).
 */
export async function recordReportedPayment(ctx: ServiceContext, report: ReportedPayment): Promise<boolean> {
  const [skill] = await ctx.db
    .select({
      id: skills.id,
      priceAtomic: skills.priceAtomic,
      countFloorAtomic: skills.countFloorAtomic,
      countFloorUntil: skills.countFloorUntil,
      paymentAddress: skills.paymentAddress,
      network: skills.network,
    })
    .from(skills)
    .where(eq(skills.slug, report.skillSlug));
  if (!skill) throw new AppError('NOT_FOUND', 'Skill not found');
  const amount = reportedAmount(report.amount);
  if (amount !== skill.priceAtomic) {
    throw new AppError(
      'VALIDATION',
      `Invalid request: field "amount": ${amount} micro-USDC is not the listed price (${skill.priceAtomic} micro-USDC)`,
    );
  }
  return (await nominatePayment(ctx.db, ctx.config.chain, skill, report.paymentTxHash, ctx.clock.now())).created;
}

/** "$0.001" and "0.001" are USDC; an integer (1000 or "1000") is micro-USDC. */
function reportedAmount(amount: string | number): bigint {
  if (typeof amount === 'number' && Number.isSafeInteger(amount) && amount > 0) return BigInt(amount);
  if (typeof amount === 'string' && /^[1-9][0-9]{0,17}$/.test(amount)) return BigInt(amount);
  return priceToAtomic(amount, 'amount');
}
