/**
 * The dev marketplace's ready-made people, written straight through the registry's services: a
 * creator (the dev chain's creator account) with the groups its skills name and a creator key for
 * the skill server, and a consumer owning the demo wallet with a consumer key. Idempotent: a
 * restart finds them and keeps the keys stored in dev.json while they are valid.
 */
import { existsSync } from 'node:fs';
import type { Address, PrivateKeyAccount } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { encryptKeystore, loadSpendingWallet, writeKeystoreFile } from 'skill-market/wallet';
import type { ServiceContext } from '../registry';
import { createApiKey, findApiKey, type ApiKeyType } from '../registry/modules/auth';
import { createGroup, listGroups } from '../registry/modules/groups';
import { findOrCreateByWallet } from '../registry/modules/users';
import { registerWallet } from '../registry/modules/wallets';
import { DEMO_WALLET_LABEL } from './demo-wallet';

/** The demo wallet from its keystore, made on first start (a light scrypt: a test-only key on a local chain). */
export async function openDemoWallet(keystorePath: string, passphrase: string): Promise<PrivateKeyAccount> {
  if (!existsSync(keystorePath)) {
    await writeKeystoreFile(keystorePath, await encryptKeystore(generatePrivateKey(), passphrase, { scrypt: { n: 2 ** 12 } }));
  }
  return loadSpendingWallet({ keystorePath, passphrase });
}

export interface SeedResult {
  creatorId: string;
  creatorKey: string;
  consumerKey: string;
}

export async function seedMarketplace(
  ctx: ServiceContext,
  people: {
    creator: Address;
    demoWallet: Address;
    groups: readonly string[];
    creatorKey?: string | undefined;
    consumerKey?: string | undefined;
  },
): Promise<SeedResult> {
  const creator = await findOrCreateByWallet(ctx, people.creator);
  await ensureGroups(ctx, creator.id, people.creator, people.groups);
  const consumer = await findOrCreateByWallet(ctx, people.demoWallet);
  await registerWallet(ctx, consumer.id, { address: people.demoWallet, label: DEMO_WALLET_LABEL });
  return {
    creatorId: creator.id,
    creatorKey: await keepOrMakeKey(ctx, creator.id, people.creatorKey, 'creator', 'market dev skill server'),
    consumerKey: await keepOrMakeKey(ctx, consumer.id, people.consumerKey, 'consumer', 'market dev demo consumer'),
  };
}

/** Creates the creator's groups that do not exist yet (skills may only name their own groups). */
export async function ensureGroups(
  ctx: ServiceContext,
  creatorId: string,
  creatorAddress: Address,
  names: readonly string[],
): Promise<void> {
  const existing = new Set((await listGroups(ctx, creatorAddress)).flatMap((g) => [g.name.toLowerCase(), g.slug.toLowerCase()]));
  for (const name of new Set(names)) {
    if (!existing.has(name.toLowerCase())) await createGroup(ctx, creatorId, { name, description: `${name} skills (made by market dev)` });
  }
}

async function keepOrMakeKey(
  ctx: ServiceContext,
  userId: string,
  stored: string | undefined,
  type: ApiKeyType,
  name: string,
): Promise<string> {
  if (stored) {
    const row = await findApiKey(ctx, stored);
    if (row && row.revokedAt === null && row.userId === userId && row.type === type) return stored;
  }
  return (await createApiKey(ctx, userId, name, type)).key;
}
