/**
 * Everything a client test needs, started once per test file: the registry in process on a real
 * port (with a creator, a group and a consumer key), the test skill server, and, for paying
 * tests, a local chain with our facilitator over HTTP.
 */
import { afterAll, beforeAll } from 'bun:test';
import { eq } from 'drizzle-orm';
import type { LocalAccount } from 'viem';
import { SkillMarket, type Skill, type SkillMarketOptions } from 'skill-market';
import { formatPriceUsd, type AssetInfo } from 'skill-market/x402';
import { paymentVerifications, usageRecords } from '../../../src/db/schema';
import { createKey, newWallet, walletSignIn } from '../../support/auth';
import { registryFixture } from '../../support/registry';
import { newCreator, type Creator } from '../../support/catalogue';
import { type LocalChain, type TestAccount, startChain } from '../../support/chain';
import { startFacilitatorFixture, type FacilitatorFixture } from '../../support/facilitator';
import { startSkillServer, type TestSkill, type TestSkillServer } from './skill-server';

export const NETWORK = 'eip155:84532';

export interface World {
  chain: LocalChain;
  facilitatorUrl: string;
  registryUrl: string;
  server: TestSkillServer;
  creator: Creator;
  /** Name of a group of the creator's, for registrations. */
  group: string;
  consumerKey: string;
  /** The token skills are paid in (our EIP-3009 USDC on the chain, or a stand-in without one). */
  asset: AssetInfo;
  /** Lists a skill served by the test server; returns the registry listing. */
  addSkill(
    overrides?: Partial<TestSkill> & { name?: string; inputSchema?: Record<string, unknown>; listedNetwork?: string; usageBased?: boolean },
  ): Promise<Skill & { payTo: `0x${string}` }>;
  /** A client paying from `wallet` (default a fresh funded payer) on the test network with the test token allowed. */
  market(options?: Partial<SkillMarketOptions>): SkillMarket;
  /** A new payer holding `usdc` atomic units (chain worlds only). */
  payer(usdc?: bigint): Promise<TestAccount>;
  /** A new address the creator has proven holding: a skill may be paid to it (chain worlds only). */
  payee(): Promise<`0x${string}`>;
  /** Usage records the registry holds for a skill. */
  usage(skillId: string): Promise<{ amount: bigint; paymentRef: string | null }[]>;
  /** The payments reported for a skill, as the registry checks them on chain. */
  reported(skillId: string): Promise<{ txHash: string; status: string }[]>;
}

/** A local account whose signatures are counted. */
export function countingAccount(account: LocalAccount): LocalAccount & { signatures: number } {
  const counted = Object.assign(Object.create(account) as LocalAccount, { signatures: 0 });
  counted.signTypedData = (async (data: Parameters<LocalAccount['signTypedData']>[0]) => {
    counted.signatures++;
    return account.signTypedData(data);
  }) as LocalAccount['signTypedData'];
  // A voucher is signed as its digest (the fast path of a key held in this process).
  const sign = account.sign;
  if (sign) {
    counted.sign = (async (args: Parameters<NonNullable<LocalAccount['sign']>>[0]) => {
      counted.signatures++;
      return sign.call(account, args);
    }) as LocalAccount['sign'];
  }
  return counted;
}

/** Registers the world's hooks; fields are filled in beforeAll. */
export function useWorld(options: { chain: boolean }): World {
  const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });
  const world = {} as World;
  let facilitator: FacilitatorFixture | undefined;
  let registryServer: ReturnType<typeof Bun.serve> | undefined;

  beforeAll(async () => {
    if (options.chain) {
      world.chain = await startChain({ payers: 1, payees: 1, relayers: 2 });
      // One embedded database for the registry and the facilitator (one schema holds both).
      facilitator = await startFacilitatorFixture(world.chain, 'embedded', {
        relayers: world.chain.accounts.relayers,
        database: fx.database,
      });
      facilitator.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
      world.facilitatorUrl = `http://127.0.0.1:${facilitator.facilitator.app.server!.port}`;
      const { address, name, version, decimals } = world.chain.token;
      world.asset = { address, name, version, decimals };
    } else {
      world.asset = { address: newWallet().address, name: 'USD Coin', version: '2', decimals: 6 };
    }
    registryServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => fx.registry.app.handle(r) });
    world.registryUrl = `http://127.0.0.1:${registryServer.port}`;
    world.server = await startSkillServer(options.chain ? world.facilitatorUrl : undefined);
    world.creator = await newCreator(fx.request);
    world.group = (await world.creator.group()).name;
    const consumer = await walletSignIn(fx.request);
    world.consumerKey = (await createKey(fx.request, consumer.token, 'consumer')).key;
  }, 60_000);

  afterAll(async () => {
    await world.server?.close();
    await registryServer?.stop(true);
    await facilitator?.facilitator.app.stop();
    await facilitator?.close();
    await world.chain?.stop();
  });

  world.payer = async (usdc = 1_000_000n) => world.chain.createAccount({ usdc });
  world.payee = async () => {
    const account = await world.chain.createAccount();
    await world.creator.prove(account);
    return account.address;
  };

  world.addSkill = async (overrides = {}) => {
    const name = overrides.name ?? `skill-${crypto.randomUUID().slice(0, 8)}`;
    // A fresh payee the creator proves holding: a skill is only ever paid to a proven address.
    const payee = options.chain ? await world.chain.createAccount() : newWallet();
    await world.creator.prove(payee);
    const payTo = payee.address;
    const skill: TestSkill = {
      price: 10_000n,
      payTo,
      network: NETWORK,
      asset: world.asset,
      handler: (input) => ({ echo: input }),
      ...overrides,
    };
    world.server.skills.set(name, skill);
    const res = await world.creator.register({
      name,
      endpoint: world.server.url,
      price: formatPriceUsd(skill.price),
      paymentAddress: skill.payTo,
      network: overrides.listedNetwork ?? skill.network,
      groups: [world.group],
      ...(overrides.inputSchema ? { inputSchema: overrides.inputSchema } : {}),
      ...(overrides.usageBased !== undefined ? { usageBased: overrides.usageBased } : {}),
    });
    if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
    return { ...((await res.json()) as Skill), payTo: skill.payTo as `0x${string}` };
  };

  world.market = (overrides = {}) =>
    new SkillMarket({
      apiUrl: world.registryUrl,
      apiKey: world.consumerKey,
      network: NETWORK,
      assets: [{ network: NETWORK, ...world.asset }],
      wallet: options.chain ? world.chain.accounts.payer : newWallet(),
      ...overrides,
    });

  world.usage = async (skillId) =>
    (await fx.database.db
      .select({ amount: usageRecords.amount, paymentRef: usageRecords.paymentRef })
      .from(usageRecords)
      .where(eq(usageRecords.skillId, skillId))) as {
      amount: bigint;
      paymentRef: string | null;
    }[];

  world.reported = async (skillId) =>
    fx.database.db
      .select({ txHash: paymentVerifications.txHash, status: paymentVerifications.status })
      .from(paymentVerifications)
      .where(eq(paymentVerifications.skillId, skillId));

  return world;
}
