import { and, asc, desc, eq } from 'drizzle-orm';
import { getAddress, type Address } from 'viem';
import { ADDRESS_PATTERN } from 'skill-market/x402';
import { users, wallets } from '../../../db/schema';
import type { ServiceContext } from '../../context';
import { AppError } from '../../../http';
import type { BalanceReader } from './balance';
import { fixedDecimals } from '../../lib/amounts';
import type { ActiveWallet, RegisterWallet, WalletView } from 'skill-market/registry';
import { checkProof } from './proof';

type WalletRow = typeof wallets.$inferSelect;

// C0/C1 controls, zero-width and bidirectional-override characters: a label is plain, visible text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const HIDDEN_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;

function toWalletView(row: WalletRow): WalletView {
  return {
    id: row.id,
    address: row.address,
    label: row.label,
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

/**
 * Registers `address` for the user and makes it the active wallet. Registering one of your own
 * addresses again is idempotent: it becomes active again (un-revoked if it was revoked) and keeps
 * its label unless a new one is given. An address of another user is refused, unless they never
 * proved holding its key and this caller does: a proof moves it to the caller. With a proof that
 * holds (see proof.ts) the wallet is marked proven; a proof that does not hold is refused (400).
 */
export async function registerWallet(
  ctx: ServiceContext,
  userId: string,
  input: RegisterWallet,
): Promise<{ wallet: WalletView; created: boolean }> {
  const address = checksummed(input.address);
  const label = input.label === undefined ? undefined : normalizeLabel(input.label);
  const now = ctx.clock.now();
  if (input.proof) await checkProof(input.proof, address, userId, now);
  const proven = input.proof ? { provenAt: now } : {};
  return ctx.db.transaction(async (tx) => {
    // One switch of the active wallet at a time per user.
    await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
    const [existing] = await tx.select().from(wallets).where(eq(wallets.address, address)).for('update');
    // Another user's address stays theirs, unless they never proved holding it and this caller does.
    const claimed = existing !== undefined && existing.userId !== userId && input.proof !== undefined && existing.provenAt === null;
    if (existing && existing.userId !== userId && !claimed) throw alreadyRegistered();
    await tx
      .update(wallets)
      .set({ isActive: false, updatedAt: now })
      .where(and(eq(wallets.userId, userId), eq(wallets.isActive, true)));
    if (existing) {
      const [row] = await tx
        .update(wallets)
        .set({
          userId,
          isActive: true,
          revokedAt: null,
          updatedAt: now,
          ...proven,
          ...(claimed ? { label: label ?? null, createdAt: now, lastUsedAt: null } : label === undefined ? {} : { label }),
        })
        .where(eq(wallets.id, existing.id))
        .returning();
      return { wallet: toWalletView(row!), created: claimed };
    }
    const [row] = await tx
      .insert(wallets)
      .values({ userId, address, label: label ?? null, isActive: true, createdAt: now, updatedAt: now, ...proven })
      .onConflictDoNothing({ target: wallets.address })
      .returning();
    // Another user registered it between our read and this insert.
    if (!row) throw alreadyRegistered();
    return { wallet: toWalletView(row), created: true };
  });
}

async function getActiveWallet(ctx: ServiceContext, userId: string): Promise<WalletView | null> {
  const [row] = await ctx.db
    .select()
    .from(wallets)
    .where(and(eq(wallets.userId, userId), eq(wallets.isActive, true)));
  return row ? toWalletView(row) : null;
}

/** The active wallet with its live USDC balance, or null when the user has none. */
export async function getActiveWalletWithBalance(
  ctx: ServiceContext,
  userId: string,
  balances: BalanceReader,
): Promise<ActiveWallet | null> {
  const wallet = await getActiveWallet(ctx, userId);
  return wallet ? withBalance(wallet, balances) : null;
}

/** One of the user's wallets, revoked or not, with its live USDC balance; 404 `Wallet not found` for any other address. */
export async function getWalletWithBalance(
  ctx: ServiceContext,
  userId: string,
  address: string,
  balances: BalanceReader,
): Promise<ActiveWallet> {
  const [row] = await ctx.db
    .select()
    .from(wallets)
    .where(and(eq(wallets.userId, userId), eq(wallets.address, lookupAddress(address))));
  if (!row) throw notFound();
  return withBalance(toWalletView(row), balances);
}

async function withBalance(wallet: WalletView, balances: BalanceReader): Promise<ActiveWallet> {
  const read = await balances.read(wallet.address);
  const where = { network: balances.network, asset: balances.asset };
  if (read.type === 'unavailable') {
    return { ...wallet, ...where, balance: null, balanceAtomic: null, balanceCheckedAt: null, balanceError: read.error };
  }
  return {
    ...wallet,
    ...where,
    balance: fixedDecimals(read.atomic, balances.decimals),
    balanceAtomic: read.atomic.toString(),
    balanceCheckedAt: read.checkedAt.toISOString(),
  };
}

/** Every wallet of the user, revoked ones included, newest first. */
export async function listWallets(ctx: ServiceContext, userId: string): Promise<WalletView[]> {
  const rows = await ctx.db.select().from(wallets).where(eq(wallets.userId, userId)).orderBy(desc(wallets.createdAt), asc(wallets.id));
  return rows.map(toWalletView);
}

/** Sets or (with null) removes the label of one of the user's wallets. */
export async function setWalletLabel(ctx: ServiceContext, userId: string, address: string, label: string | null): Promise<WalletView> {
  const normalized = normalizeLabel(label);
  const [row] = await ctx.db
    .update(wallets)
    .set({ label: normalized, updatedAt: ctx.clock.now() })
    .where(and(eq(wallets.userId, userId), eq(wallets.address, lookupAddress(address))))
    .returning();
  if (!row) throw notFound();
  return toWalletView(row);
}

/** Soft-revokes one of the user's wallets: no longer active, still listed. Idempotent; funds are not touched. */
export async function revokeWallet(ctx: ServiceContext, userId: string, address: string): Promise<WalletView> {
  const where = and(eq(wallets.userId, userId), eq(wallets.address, lookupAddress(address)));
  const now = ctx.clock.now();
  const [row] = await ctx.db.select().from(wallets).where(where);
  if (!row) throw notFound();
  if (row.revokedAt !== null) return toWalletView(row);
  const [revoked] = await ctx.db
    .update(wallets)
    .set({ revokedAt: now, isActive: false, updatedAt: now })
    .where(eq(wallets.id, row.id))
    .returning();
  return toWalletView(revoked ?? row);
}

/** Trimmed NFC text; empty means no label. */
function normalizeLabel(raw: string | null): string | null {
  if (raw === null) return null;
  const label = raw.normalize('NFC').trim();
  if (label === '') return null;
  if (HIDDEN_CHARACTERS.test(label)) {
    throw new AppError('VALIDATION', 'Invalid request: field "label": control and invisible formatting characters are not allowed');
  }
  return label;
}

/** For registration: any case, but a mixed-case address must carry a valid EIP-55 checksum (a typo guard). */
function checksummed(raw: string): Address {
  const address = getAddress(raw.toLowerCase());
  const hex = raw.slice(2);
  const mixed = /[a-f]/.test(hex) && /[A-F]/.test(hex);
  if (mixed && raw !== address) {
    throw new AppError('VALIDATION', 'Invalid request: field "address": the EIP-55 checksum does not match; check the address for a typo');
  }
  return address;
}

/** For lookups: case-insensitive. */
function lookupAddress(raw: string): string {
  if (!ADDRESS_PATTERN.test(raw)) throw notFound();
  return getAddress(raw.toLowerCase());
}

const alreadyRegistered = () => new AppError('VALIDATION', 'Address already registered');
const notFound = () => new AppError('NOT_FOUND', 'Wallet not found');
