/**
 * `market dev`: the whole marketplace on loopback in one process tree. This process runs the
 * registry and the facilitator on one embedded database; anvil and the skill server are children.
 * Any part that dies brings the whole down (`onFatal`); `stop()` ends everything.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
// The example's source as text (Bun resolves the extensionless path), embedded so that the
// compiled binary alone has skills to serve.
import exampleSource from '../../examples/creator/skills' with { type: 'text' };
import { fileChannelStore } from 'skill-market/creator';
import { RegistryClient } from 'skill-market/registry';
import type { Address } from 'viem';
import { loadRegistryConfig, OPEN_METRICS, type ReceiverKey } from '../config';
import type { Database } from '../db';
import { hostedChannels } from '../db/schema';
import { createFacilitator } from '../facilitator';
import { createLogger, type Logger } from '../log';
import { startRegistry, type RunningRegistry, type ServiceContext } from '../registry';
import { listOwnSkills, updateSkill } from '../registry/modules/skills';
import { systemClock } from '../runtime/clock';
import { pendingWork } from '../runtime/pending';
import { loadSkillModule } from '../runtime/skill-module';
import { devAccounts, privateKeyOf } from './accounts';
import { DEV_NETWORK, devTokenAddress, fundDemoWallet, mintTestUsdc, startDevChain, type DevChain } from './chain';
import { claimDataDir, devPaths, readSecrets, writePrivateJson, type DevPaths } from './data-dir';
import { demoWalletRoutes } from './demo-wallet';
import { DevError } from './errors';
import { checkPortsFree } from './ports';
import { FALLBACK_GROUP, type DevProfile } from './profile';
import { ensureGroups, openDemoWallet, seedMarketplace } from './seed';
import { startSkillServer, type SkillServer } from './skill-server';

export interface DevOptions {
  dir: string;
  fresh: boolean;
  /** The skills module; default examples/creator/skills.ts here, else a copy of it in the data directory. */
  module?: string | undefined;
  ports: { registry: number; facilitator: number; skills: number; chain: number };
  /** Progress and reports, one line each. */
  say(line: string): void;
  /** A part died: the caller stops the rest and exits non-zero. */
  onFatal(reason: string): void;
}

export interface DevStack {
  paths: DevPaths;
  registryUrl: string;
  facilitatorUrl: string;
  skillServerUrl: string;
  rpcUrl: string;
  token: Address;
  module: string;
  demoWallet: { address: Address; balance: bigint };
  skills: { slug: string; name: string; price: string; inputSchema: unknown }[];
  pids: { anvil: number; skillServer: number | undefined };
  stop(): Promise<void>;
}

/**
 * The module given, else the repository's example, else (the binary in an empty folder) the example
 * written into the data directory, where the user can edit it and see it reload.
 */
function skillsModule(given: string | undefined, paths: DevPaths): string {
  if (given !== undefined) {
    const path = resolve(given);
    if (!existsSync(path)) throw new DevError(`cannot find the skills module ${path}`);
    return path;
  }
  const example = resolve(EXAMPLE_MODULE);
  if (existsSync(example)) return example;
  const copy = join(paths.root, 'skills.ts');
  if (!existsSync(copy)) writeFileSync(copy, exampleSource as unknown as string);
  return copy;
}

const EXAMPLE_MODULE = 'examples/creator/skills.ts';

export async function startDev(options: DevOptions): Promise<DevStack> {
  const started = performance.now();
  const step = async <T>(label: string, run: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const value = await run();
    options.say(`  ✓ ${label} (${((performance.now() - t) / 1000).toFixed(1)} s)`);
    return value;
  };
  const paths = devPaths(options.dir);
  const lock = claimDataDir(paths, options.fresh);
  const module = skillsModule(options.module, paths);
  const stops: (() => Promise<void>)[] = [];
  let stopping = false;
  const fatal = (reason: string) => {
    if (!stopping) options.onFatal(reason);
  };
  const stopAll = async () => {
    stopping = true;
    // Children and servers together; each part bounds its own wait.
    await Promise.allSettled(
      stops
        .splice(0)
        .reverse()
        .map((stop) => stop()),
    );
    lock.release();
  };

  try {
    const p = options.ports;
    await checkPortsFree([
      { name: 'marketplace', port: p.registry, flag: '--port' },
      { name: 'facilitator', port: p.facilitator, flag: '--facilitator-port' },
      { name: 'skill server', port: p.skills, flag: '--skills-port' },
      { name: 'local chain', port: p.chain, flag: '--chain-port' },
    ]);
    const secrets = readSecrets(paths);
    const accounts = devAccounts();
    const logger = createLogger('warn', (line) => options.say(line));
    const firstStart = !existsSync(paths.database);

    const demo = await openDemoWallet(paths.keystore, secrets.passphrase);
    const config = devRegistryConfig(paths, p.registry, p.chain, secrets.jwtSecret, devOperators(demo.address, process.env));
    // The chain and the database are independent: start them together.
    const [chain, registry] = await Promise.all([
      step(`local chain on 127.0.0.1:${p.chain} (anvil, chain ${DEV_NETWORK})`, () =>
        startDevChain({
          port: p.chain,
          statePath: paths.chainState,
          onExit: (reason) => fatal(`the local chain (anvil) exited (${reason})`),
        }),
      ).then((c) => {
        stops.push(() => c.anvil.stop());
        return c;
      }),
      // The registry waits for nothing on chain: the token's address is known in advance.
      step(`marketplace on the embedded database${firstStart ? ' (first start: creating it)' : ''}`, () =>
        startRegistry(config, logger, {
          plugins: [
            demoWalletRoutes(demo, accounts.creator, (to, amount) =>
              mintTestUsdc(`http://127.0.0.1:${p.chain}`, devTokenAddress(), to, amount),
            ),
          ],
        }),
      ).then((r) => {
        stops.push(r.stop);
        return r;
      }),
    ]);

    const balance = await step('test USDC deployed, demo wallet funded', () => fundDemoWallet(chain, demo));
    // The creator's key to the facilitator: its consent to the channel refunds the facilitator's authorizer signs.
    const receiverKey = randomBytes(24).toString('hex');
    const facilitatorUrl = await step('facilitator (relayer: a local chain account)', () =>
      startDevFacilitator(registry, chain, p.facilitator, logger, stops, [{ receiver: accounts.creator.address, key: receiverKey }]),
    );

    const ctx = { db: registry.database.db, clock: systemClock, config, logger, pending: pendingWork() };
    await adoptChannelFiles(join(paths.root, 'channels'), registry.database.db, options.say);
    let groups = await skillGroups(module, false);
    const seeded = await seedMarketplace(ctx, {
      creator: accounts.creator.address,
      demoWallet: demo.address,
      groups: groups.names,
      creatorKey: secrets.creatorKey,
      consumerKey: secrets.consumerKey,
    });
    writePrivateJson(paths.secrets, { ...secrets, creatorKey: seeded.creatorKey, consumerKey: seeded.consumerKey });

    const skillServerUrl = `http://127.0.0.1:${p.skills}`;
    const listed = () => listSkills(registry.url, accounts.creator.address);
    const skillServer: SkillServer = await step(`skill server on 127.0.0.1:${p.skills} (${module})`, () =>
      startSkillServer({
        module,
        url: skillServerUrl,
        args: () => [
          '--port',
          String(p.skills),
          '--host',
          '127.0.0.1',
          '--endpoint',
          skillServerUrl,
          '--facilitator',
          facilitatorUrl,
          '--network',
          DEV_NETWORK,
          '--asset',
          chain.token,
          // Cheap skills are sold over payment channels too (the banner's call pays through one). The
          // facilitator keeps their state, so every dev skill server of the demo creator
          // (`market serve --dev` too) takes a payer's one channel with it.
          '--channels-store',
          'facilitator',
          // Its /metrics beside the marketplace's and the facilitator's, open as theirs are in dev.
          '--metrics',
          'on',
          ...(groups.ungrouped ? ['--groups', FALLBACK_GROUP] : []),
        ],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          LOG_LEVEL: 'warn',
          MARKET_WALLET_ADDRESS: accounts.creator.address,
          MARKET_API_KEY: seeded.creatorKey,
          MARKET_API_URL: registry.url,
          MARKET_FACILITATOR_API_KEY: receiverKey,
        },
        async prepare() {
          groups = await skillGroups(module, true);
          await ensureGroups(ctx, seeded.creatorId, accounts.creator.address, groups.names);
        },
        async registered() {
          const deadline = Date.now() + 10_000;
          while (Date.now() < deadline) {
            const own = await listOwnSkills(ctx, seeded.creatorId);
            if (groups.skills.every((name) => own.some((s) => s.name === name)))
              return listOnly(ctx, seeded.creatorId, paths.served, groups.skills);
            await Bun.sleep(50);
          }
          throw new Error('the skills were not registered within 10 s');
        },
        log: options.say,
        onExit: fatal,
      }),
    );
    stops.push(() => skillServer.stop());

    const profile: DevProfile = {
      apiUrl: registry.url,
      apiKey: seeded.consumerKey,
      network: DEV_NETWORK,
      asset: chain.token,
      keystore: paths.keystore,
      passphrase: secrets.passphrase,
      facilitatorUrl,
      rpcUrl: chain.rpcUrl,
      creatorKey: seeded.creatorKey,
      creatorAddress: accounts.creator.address,
      receiverKey,
    };
    writePrivateJson(paths.profile, profile);
    const skills = (await listed()).filter((s) => groups.skills.includes(s.name));
    options.say(`  ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return {
      paths,
      registryUrl: registry.url,
      facilitatorUrl,
      skillServerUrl,
      rpcUrl: chain.rpcUrl,
      token: chain.token,
      module,
      demoWallet: { address: demo.address, balance },
      skills,
      pids: { anvil: chain.anvil.pid, skillServer: skillServer.pid },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Who operates the local marketplace: the demo wallet (so the pages' Operator section and the
 * `/operator/*` routes can be tried at once), and the wallets of OPERATOR_ADDRESSES in the shell.
 */
export function devOperators(demoWallet: string, env: Record<string, string | undefined>): string {
  const more = (env.OPERATOR_ADDRESSES ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  return [demoWallet, ...more].join(',');
}

function devRegistryConfig(paths: DevPaths, port: number, chainPort: number, jwtSecret: string, operators: string) {
  const url = `http://127.0.0.1:${port}`;
  // Built from our own values only: DATABASE_URL or MARKET_NETWORK in the shell must not leak in.
  return loadRegistryConfig(
    {
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: url,
      MARKET_DATA_DIR: paths.database,
      LOG_LEVEL: 'warn',
      AUTH_JWT_SECRET: jwtSecret,
      SIWE_CHAIN_ID: String(DEV_NETWORK.split(':')[1]),
      MARKET_ALLOW_HTTP_ENDPOINTS: 'true',
      MARKET_NETWORK: DEV_NETWORK,
      MARKET_SKILL_NETWORKS: DEV_NETWORK, // a skill listed on Base could not be paid here
      MARKET_USDC_ADDRESS: devTokenAddress(),
      MARKET_RPC_URL: `http://127.0.0.1:${chainPort}`,
      MARKET_BALANCE_CACHE_MS: '0',
      OPERATOR_ADDRESSES: operators,
      // Where a migrated empty database is kept for the next new data directory (--fresh, another --dir).
      HOME: process.env.HOME,
      XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
    },
    process.cwd(),
    { devTools: true },
  ); // the pages offer the demo wallet
}

/** The facilitator on the registry's database, in this process, on its own port. */
async function startDevFacilitator(
  registry: RunningRegistry,
  chain: DevChain,
  port: number,
  logger: Logger,
  stops: (() => Promise<void>)[],
  receiverKeys: readonly ReceiverKey[],
): Promise<string> {
  const facilitator = createFacilitator({
    database: registry.database,
    logger,
    config: {
      network: DEV_NETWORK,
      rpcUrl: chain.rpcUrl,
      relayerPrivateKeys: [privateKeyOf(devAccounts().relayer)],
      assets: [chain.token],
      pollIntervalMs: 20,
      receiptTimeoutMs: 10_000,
      reconcileIntervalMs: 5_000,
      receiverKeys,
      // Open, as the reference facilitators: any local server may claim through it (the demo creator's sends its key anyway).
      open: true,
      // Its Bazaar reads the live 402s of the local skill servers it catalogues.
      discoveryAllowPrivate: true,
      metrics: OPEN_METRICS,
    },
  });
  await facilitator.start();
  facilitator.app.listen({ hostname: '127.0.0.1', port });
  stops.push(async () => {
    await facilitator.app.stop();
    await facilitator.stop();
  });
  return `http://127.0.0.1:${port}`;
}

/** The module's skill names and the groups they name; `ungrouped` when one names none. */
async function skillGroups(module: string, fresh: boolean): Promise<{ skills: string[]; names: string[]; ungrouped: boolean }> {
  const skills = await loadSkillModule(module, process.cwd(), { fresh });
  const entries = Object.entries(skills);
  const ungrouped = entries.some(([, s]) => s.groups.length === 0);
  return {
    skills: entries.map(([name]) => name),
    names: [...entries.flatMap(([, s]) => s.groups), ...(ungrouped ? [FALLBACK_GROUP] : [])],
    ungrouped,
  };
}

async function listSkills(registryUrl: string, creator: Address): Promise<DevStack['skills']> {
  const { items } = await new RegistryClient({ apiUrl: registryUrl }).search({ creator, limit: 100 });
  return items;
}

/**
 * The listing shows exactly the module's skills of the dev skill server: the ones it served before
 * (served.json: the example skills, a renamed skill) and no longer serves are taken off the
 * listing, and the module's are listed again if they were. Skills served elsewhere
 * (`market serve --dev`) are left as they are.
 */
async function listOnly(ctx: ServiceContext, creatorId: string, servedFile: string, names: readonly string[]): Promise<void> {
  const before = existsSync(servedFile) ? (JSON.parse(readFileSync(servedFile, 'utf8')) as string[]) : [];
  for (const skill of await listOwnSkills(ctx, creatorId)) {
    const wanted = names.includes(skill.name);
    if (!wanted && !before.includes(skill.name)) continue;
    if (skill.isActive !== wanted) await updateSkill(ctx, creatorId, skill.slug, { isActive: wanted });
  }
  writePrivateJson(servedFile, names);
}

/**
 * Channels a dev skill server of an earlier version kept in files (`<dev>/channels`) move to the
 * facilitator's hosted channels once, so their unclaimed vouchers are still claimed; the folder is
 * renamed `channels.moved`.
 */
async function adoptChannelFiles(folder: string, db: Database, say: (line: string) => void): Promise<void> {
  if (!existsSync(folder)) return;
  const store = await fileChannelStore(folder);
  const states = await store.list();
  await store.close();
  for (const state of states) {
    await db
      .insert(hostedChannels)
      .values({
        channelId: state.channelId.toLowerCase(),
        receiver: state.config.receiver.toLowerCase(),
        state,
        chargedCumulativeAmount: state.chargedCumulativeAmount,
      })
      .onConflictDoNothing();
  }
  renameSync(folder, `${folder}.moved`);
  if (states.length > 0) say(`  ✓ ${states.length} payment channel(s) of an earlier version moved to the facilitator`);
}
