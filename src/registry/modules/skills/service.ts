import { and, eq } from 'drizzle-orm';
import { DEFAULT_NETWORK } from 'skill-market/x402';
import { skillGroupMembers, skills } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import { slugify, withUniqueSlug } from '../../lib/slug';
import { currentServiceQuality } from '../skill-health';
import { createSkillStats } from '../stats';
import type { RegisterSkill, SkillView, UpdateSkill } from 'skill-market/registry';
import { resolveOwnedGroups } from './filing';
import { checkSkillNetwork } from './networks';
import { floorAfterPriceChange } from './count-floor';
import { hasProven } from '../wallets';
import { callUrlOf, paymentAddressOf, priceToAtomic, schemaOf, tiersOf } from './validate';
import { findSkillRowBySlug, selectSkills, toSkillView } from './view';
import { hiddenSkill, isHidden } from './visibility';
import { lockCreator, lockEndpoint, refuseOverHourlyLimit, refuseTakenEndpoint } from './intake';

type SkillRow = typeof skills.$inferSelect;
type Tx = Parameters<Parameters<ServiceContext['db']['transaction']>[0]>[0];

/**
 * Registers a skill, or updates the caller's skill of that name: `created` tells which. A
 * re-registration that changes nothing writes nothing (updatedAt stays); `isActive` is never
 * changed by registration, nor a price, free trial or volume prices the owner edited (PATCH, the
 * dashboard): the listing's are then the ones the skill server follows, so a restart never undoes an edit.
 */
export async function registerSkill(
  ctx: ServiceContext,
  creatorId: string,
  input: RegisterSkill,
): Promise<{ created: boolean; skill: SkillView }> {
  const values = {
    description: input.description ?? null,
    priceAtomic: priceToAtomic(input.price),
    network: input.network ?? DEFAULT_NETWORK,
    endpoint: callUrlOf(input.endpoint, input.name, ctx.config),
    paymentAddress: paymentAddressOf(input.paymentAddress),
    // A registration without one (an older skill server) leaves the listed receipt signer as it is.
    ...(input.receiptSigner === undefined ? {} : { receiptSigner: paymentAddressOf(input.receiptSigner, 'receiptSigner') }),
    inputSchema: schemaOf('inputSchema', input.inputSchema),
    outputSchema: schemaOf('outputSchema', input.outputSchema),
    category: input.category ?? null,
    trial: input.trial ?? null,
    tiers: null as ReturnType<typeof tiersOf>,
    // How the skill charges is a fact of the skill server's code, so its home is the registration
    // the server sends from the skill's definition: known before any call, even while the server
    // is down or behind an address the health probe may not reach (its live offers are a snapshot
    // of what the facilitator allows at the moment, not the skill's terms). A registration without
    // it (an older server, another SDK) keeps what is listed: false for a new skill, or what the
    // owner set with PATCH.
    ...(input.usageBased === undefined ? {} : { usageBased: input.usageBased }),
  };
  values.tiers = tiersOf(input.tiers, values.priceAtomic);
  await checkSkillNetwork(ctx, values.network);
  if (!(await hasProven(ctx.db, creatorId, values.paymentAddress))) throw payeeNotProven(values.paymentAddress);
  const groups = await resolveOwnedGroups(ctx, creatorId, input.groups);
  const groupIds = groups.map((g) => g.id);
  const now = ctx.clock.now();

  const outcome = await ctx.db.transaction(async (tx) => {
    // One registration of an endpoint at a time, anywhere: two skills cannot take one URL at once.
    await lockEndpoint(tx, values.endpoint);
    const byName = () =>
      tx
        .select()
        .from(skills)
        .where(and(eq(skills.creatorId, creatorId), eq(skills.name, input.name)))
        .for('update');
    let [existing] = await byName();
    if (!existing) {
      // New listings of one creator one at a time: a concurrent registration of this very name
      // is then seen (and updated like a re-registration) rather than counted or refused.
      await lockCreator(tx, creatorId);
      [existing] = await byName();
    }
    await refuseTakenEndpoint(tx, values.endpoint, existing?.id);
    if (!existing) {
      await refuseOverHourlyLimit(tx, ctx.config.catalogue.newSkillsPerHour, creatorId, now);
      // A conflict on insert is either the slug (try another) or a concurrent registration of
      // the same name, which is then updated like any re-registration.
      const inserted = await withUniqueSlug(slugify(input.name), async (slug) => {
        const [row] = await tx
          .insert(skills)
          .values({ creatorId, name: input.name, slug, ...values, createdAt: now, updatedAt: now })
          .onConflictDoNothing()
          .returning();
        if (row) return { row };
        [existing] = await byName();
        return existing ? { row: undefined } : undefined;
      });
      if (inserted.row) {
        await createSkillStats(tx, inserted.row.id, await currentServiceQuality(tx, inserted.row.serverUrl));
        await setGroups(tx, inserted.row.id, groupIds);
        return { created: true, id: inserted.row.id };
      }
    }
    const current = existing!;
    if (current.priceEditedAt !== null) values.priceAtomic = current.priceAtomic;
    if (current.trialEditedAt !== null) values.trial = current.trial;
    if (current.tiersEditedAt !== null) values.tiers = current.tiers;
    const currentGroups = (
      await tx.select({ id: skillGroupMembers.groupId }).from(skillGroupMembers).where(eq(skillGroupMembers.skillId, current.id))
    ).map((g) => g.id);
    if (!sameValues(current, values) || !sameSet(currentGroups, groupIds)) {
      await tx
        .update(skills)
        .set({ ...values, ...floorAfterPriceChange(current, values.priceAtomic, now), updatedAt: now })
        .where(eq(skills.id, current.id));
      await setGroups(tx, current.id, groupIds);
    }
    return { created: false, id: current.id };
  });
  ctx.reads?.skillChanged(outcome.id);
  if (outcome.created) ctx.listed?.();
  return { created: outcome.created, skill: await getSkillById(ctx, outcome.id) };
}

/**
 * Owner-only partial update; groups replace the whole set and may not be empty. A price, trial or
 * tiers set here is marked edited: re-registration keeps it.
 */
export async function updateSkill(ctx: ServiceContext, creatorId: string, slug: string, input: UpdateSkill): Promise<SkillView> {
  const existing = await ownedSkill(ctx, creatorId, slug);
  const set: Partial<typeof skills.$inferInsert> = {};
  if (input.description !== undefined) set.description = input.description;
  if (input.price !== undefined) {
    set.priceAtomic = priceToAtomic(input.price);
    set.priceEditedAt = ctx.clock.now();
    Object.assign(set, floorAfterPriceChange(existing, set.priceAtomic, set.priceEditedAt));
  }
  if (input.trial !== undefined) {
    set.trial = input.trial;
    set.trialEditedAt = ctx.clock.now();
  }
  if (input.tiers !== undefined) {
    set.tiers = tiersOf(input.tiers, set.priceAtomic ?? existing.priceAtomic);
    set.tiersEditedAt = ctx.clock.now();
  } else if (set.priceAtomic !== undefined && existing.tiers && BigInt(existing.tiers.steps[0]!.priceAtomic) >= set.priceAtomic) {
    throw new AppError(
      'VALIDATION',
      'Invalid request: field "price": must be above the first volume price (change or remove the volume prices with it)',
    );
  }
  if (input.inputSchema !== undefined) set.inputSchema = schemaOf('inputSchema', input.inputSchema);
  if (input.outputSchema !== undefined) set.outputSchema = schemaOf('outputSchema', input.outputSchema);
  if (input.isActive !== undefined) set.isActive = input.isActive;
  if (input.usageBased !== undefined) set.usageBased = input.usageBased;
  if (input.category !== undefined) set.category = input.category;
  const groupIds = input.groups ? (await resolveOwnedGroups(ctx, creatorId, input.groups)).map((g) => g.id) : undefined;
  await ctx.db.transaction(async (tx) => {
    await tx
      .update(skills)
      .set({ ...set, updatedAt: ctx.clock.now() })
      .where(eq(skills.id, existing.id));
    if (groupIds) await setGroups(tx, existing.id, groupIds);
  });
  ctx.reads?.skillChanged(existing.id);
  return getSkillById(ctx, existing.id);
}

async function ownedSkill(ctx: ServiceContext, creatorId: string, slug: string): Promise<SkillRow> {
  const [skill] = await ctx.db.select().from(skills).where(eq(skills.slug, slug));
  if (!skill) throw new AppError('NOT_FOUND', 'Skill not found');
  if (skill.creatorId !== creatorId) throw new AppError('FORBIDDEN', 'Only the skill’s creator can change it');
  return skill;
}

/** Who reads a listing, when known: a hidden skill shows to its creator and to the operators only. */
export type Viewer = () => Promise<{ userId: string; walletAddress: string } | undefined>;

/**
 * One skill with counters and groups, active or not. A hidden one (by the operators, or its
 * creator's suspension) is a 404 that says so, unless `viewer` is its creator or an operator.
 */
export async function getSkillBySlug(ctx: ServiceContext, slug: string, viewer?: Viewer): Promise<SkillView> {
  const row = await findSkillRowBySlug(ctx.db, slug);
  if (!row) throw new AppError('NOT_FOUND', 'Skill not found');
  if (isHidden({ hiddenAt: row.skill.hiddenAt, creatorSuspendedAt: row.creatorSuspendedAt })) {
    const who = viewer ? await viewer() : undefined;
    const sees = who !== undefined && (who.userId === row.skill.creatorId || ctx.config.moderation.operators.includes(who.walletAddress));
    if (!sees) throw hiddenSkill();
  }
  return toSkillView(row, ctx.config.chain);
}

async function getSkillById(ctx: ServiceContext, id: string): Promise<SkillView> {
  const [row] = await selectSkills(ctx.db).where(eq(skills.id, id));
  if (!row) throw new AppError('NOT_FOUND', 'Skill not found');
  return toSkillView(row, ctx.config.chain);
}

async function setGroups(tx: Tx, skillId: string, groupIds: string[]): Promise<void> {
  await tx.delete(skillGroupMembers).where(eq(skillGroupMembers.skillId, skillId));
  await tx.insert(skillGroupMembers).values(groupIds.map((groupId) => ({ skillId, groupId })));
}

function sameValues(
  row: SkillRow,
  values: Omit<typeof skills.$inferInsert, 'creatorId' | 'name' | 'slug' | 'createdAt' | 'updatedAt'>,
): boolean {
  return (
    row.description === values.description &&
    row.priceAtomic === values.priceAtomic &&
    row.network === values.network &&
    row.endpoint === values.endpoint &&
    row.paymentAddress === values.paymentAddress &&
    (values.receiptSigner === undefined || row.receiptSigner === values.receiptSigner) &&
    (values.usageBased === undefined || row.usageBased === values.usageBased) &&
    row.category === values.category &&
    canonical(row.inputSchema) === canonical(values.inputSchema) &&
    canonical(row.outputSchema) === canonical(values.outputSchema) &&
    canonical(row.trial) === canonical(values.trial) &&
    canonical(row.tiers) === canonical(values.tiers)
  );
}

/** A registration naming a payment address its creator has not proven: it would earn what is paid to someone else. */
function payeeNotProven(address: string): AppError {
  const why =
    `${address} is not an address this account has proven: sign in with that wallet, or prove you hold its key ` +
    "(POST /wallet/challenge, sign the message with it, POST /wallet/generate with the proof; or the dashboard's Wallets page)";
  return new AppError('VALIDATION', `Invalid request: field "paymentAddress": ${why}`, [{ field: 'paymentAddress', message: why }]);
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

/** JSON with sorted keys: jsonb does not keep key order, so compare canonical forms. */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
