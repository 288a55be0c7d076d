/** What analytics needs to know of a skill (owner, price and what a call pays to count, payee, network), read by id: one skill or a batch's. */
import { eq, inArray } from 'drizzle-orm';
import { skills } from '../../../db/schema';
import { AppError } from '../../../http';
import type { ServiceContext } from '../../context';

const facts = {
  id: skills.id,
  creatorId: skills.creatorId,
  priceAtomic: skills.priceAtomic,
  countFloorAtomic: skills.countFloorAtomic,
  countFloorUntil: skills.countFloorUntil,
  paymentAddress: skills.paymentAddress,
  network: skills.network,
  receiptSigner: skills.receiptSigner,
  tiers: skills.tiers,
};

export type SkillFacts = {
  id: string;
  creatorId: string;
  priceAtomic: bigint;
  countFloorAtomic: bigint | null;
  countFloorUntil: Date | null;
  paymentAddress: string;
  network: string;
  receiptSigner: string | null;
  /** Volume prices: their lowest step is the least a channel call pays to count. */
  tiers: { steps: { after: number; priceAtomic: string }[] } | null;
};

/** @throws AppError NOT_FOUND */
export async function skillById(ctx: ServiceContext, skillId: string): Promise<SkillFacts> {
  const [skill] = await ctx.db.select(facts).from(skills).where(eq(skills.id, skillId));
  if (!skill) throw new AppError('NOT_FOUND', 'Skill not found');
  return skill;
}

/** The skills among `ids` that exist, by id. */
export async function skillsByIds(ctx: ServiceContext, ids: readonly string[]): Promise<Map<string, SkillFacts>> {
  const listed = await ctx.db
    .select(facts)
    .from(skills)
    .where(inArray(skills.id, [...ids]));
  return new Map(listed.map((s) => [s.id, s]));
}
