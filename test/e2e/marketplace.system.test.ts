/**
 * The whole marketplace end to end, every piece in its own process: anvil with our EIP-3009 USDC,
 * and the compiled `market` binary (built once into a temp dir) as the registry, the facilitator
 * and the skill server (`market serve` of examples/creator/skills.ts from an empty folder). The
 * consumer is the SDK (`skill-market`) in this process. The registry and the facilitator share one
 * fresh PostgreSQL database when TEST_DATABASE_URL is set (one schema holds both; their migrations
 * meet under the advisory lock), else each has its own embedded database in a temp MARKET_DATA_DIR.
 *
 * The story: a creator signs in with a wallet, makes the groups the example skills name and a
 * creator key; the skill server registers itself; a consumer signs in, finds the skill by search,
 * makes a spending wallet (keystore here, only the address sent), gets it funded on chain, sees the
 * live balance, favourites the skill, is refused a call above its maxPrice, pays for three calls;
 * then every count, balance, receipt and record is checked, and every process stops on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import postgres from 'postgres';
import { parseEventLogs, verifyMessage, type Address, type Hex, type LocalAccount } from 'viem';
import {
  createSpendingWallet,
  loadSpendingWallet,
  SkillMarket,
  SpendingLimitError,
  type FetchLike,
  type PaymentReceipt,
  type Skill,
} from 'skill-market';
import { openDatabase, openEmbedded, type DatabaseHandle } from '../../src/db';
import { skillCalls, usageRecords } from '../../src/db/schema';
import { bearer, createKey, jsonPost, newWallet, walletSignIn } from '../support/auth';
import { type LocalChain, startChain, usdCoinAbi } from '../support/chain';
import { TEST_DATABASE_URL } from '../support/database';
import { eventually, lastReading } from '../support/eventually';
import { freePort, inheritedEnv } from '../support/process';
import { TEST_CACHE_HOME } from '../support/cache';

const ROOT = join(import.meta.dir, '../..');
const DATABASE = TEST_DATABASE_URL ? 'PostgreSQL' : 'embedded';
const PRICE = 2_000n; // word-count: $0.002
const FUNDING = 1_000_000n; // 1 USDC
const PASSPHRASE = 'a long enough e2e passphrase';
/** Each step's limit; the whole file normally takes well under 30 s (set-up included). */
const STEP_MS = 20_000;

const work = mkdtempSync(join(tmpdir(), 'market-e2e-'));
const binary = join(work, 'market');

// ── processes ────────────────────────────────────────────────────────────────────────────────

interface Proc {
  name: string;
  child: ReturnType<typeof Bun.spawn>;
  /** stdout and stderr so far (drained continuously, so a chatty process never blocks). */
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number>;
}

const procs: Proc[] = [];

function drain(stream: ReadableStream<Uint8Array>, into: string[]): Promise<void> {
  return (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) into.push(decoder.decode(chunk, { stream: true }));
  })().catch(() => undefined);
}

/** Runs the compiled binary with only `env` (plus PATH and HOME), from `cwd`. */
function market(name: string, args: string[], env: Record<string, string>, cwd = work): Proc {
  const child = Bun.spawn([binary, ...args], {
    cwd,
    env: { ...inheritedEnv(), HOME: work, XDG_CACHE_HOME: TEST_CACHE_HOME, LOG_LEVEL: 'info', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out: string[] = [];
  const drained = Promise.all([drain(child.stdout, out), drain(child.stderr, out)]);
  const proc: Proc = {
    name,
    child,
    output: () => out.join(''),
    exited: child.exited.then(async (code) => {
      await drained;
      return code;
    }),
  };
  procs.push(proc);
  return proc;
}

/** Polls `url` until it answers 2xx (JSON); fails at once, with the process's output, if it exits. */
async function waitFor(proc: Proc, url: string, timeoutMs = 20_000): Promise<unknown> {
  let exited: number | undefined;
  void proc.exited.then((code) => (exited = code));
  const answer = async () => {
    try {
      const res = await fetch(url);
      return res.ok ? { body: (await res.json()) as unknown } : undefined;
    } catch {
      return undefined; // not listening yet
    }
  };
  const answered = await eventually(answer, (a) => a !== undefined || exited !== undefined, `${proc.name} answers ${url}`, timeoutMs, {
    context: proc.output,
  });
  if (!answered) throw new Error(`${proc.name} exited with ${exited} before answering ${url}:\n${proc.output()}`);
  return answered.body;
}

/** SIGTERM, then the exit code (SIGKILL after 10 s so a hung process cannot outlive the file). */
async function stop(proc: Proc): Promise<number> {
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
  try {
    return await proc.exited;
  } finally {
    clearTimeout(timer);
  }
}

// Whatever happens to this test process, no child is left behind.
process.once('exit', () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

// ── the database(s) ───────────────────────────────────────────────────────────────────────────

let databaseName: string | undefined;

/** A fresh database on the TEST_DATABASE_URL server; its URL. */
async function createPostgresDatabase(): Promise<string> {
  const name = `market_e2e_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  databaseName = name;
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropPostgresDatabase(): Promise<void> {
  if (!databaseName) return;
  const admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${databaseName} with (force)`);
  } finally {
    await admin.end();
  }
}

// ── the world ────────────────────────────────────────────────────────────────────────────────

let chain: LocalChain;
let registry: Proc;
let facilitator: Proc;
let skillServer: Proc | undefined;
let registryUrl: string;
let facilitatorUrl: string;
let registryDatabase: { url: string } | { dataDir: string };

const request = (path: string, init?: RequestInit) => fetch(`${registryUrl}${path}`, init);
const getJson = async <T = any>(path: string, headers: Record<string, string> = {}): Promise<T> => {
  const res = await request(path, { headers });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
};

// What the story carries from step to step.
const creator = {} as { token: string; key: string };
const consumer = {} as { userId: string; token: string; key: string; wallet: Address; keystorePath: string; account: LocalAccount };
const listed: Record<string, Skill> = {};
let payee: Address;
const receipts: PaymentReceipt[] = [];
let payeeBefore: bigint;
/** Failures of the SDK's background work (usage records); must stay empty. */
const backgroundErrors: unknown[] = [];

beforeAll(async () => {
  const build = Bun.spawn([process.execPath, 'build', '--compile', '--minify', join(ROOT, 'src/cli/main.ts'), '--outfile', binary], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [[code, stderr]] = await Promise.all([
    Promise.all([build.exited, new Response(build.stderr).text()]),
    startChain({ payers: 1, payees: 1, relayers: 1 }).then((c) => (chain = c)),
  ]);
  if (code !== 0) throw new Error(`build failed: ${stderr}`);

  const common = { HOST: '127.0.0.1', LOG_LEVEL: 'warn', NODE_ENV: 'test' };
  let databaseEnv: { registry: Record<string, string>; facilitator: Record<string, string> };
  if (TEST_DATABASE_URL) {
    const url = await createPostgresDatabase();
    registryDatabase = { url };
    databaseEnv = { registry: { DATABASE_URL: url, DATABASE_POOL_SIZE: '5' }, facilitator: { DATABASE_URL: url, DATABASE_POOL_SIZE: '5' } };
  } else {
    const dataDir = join(work, 'registry-data');
    registryDatabase = { dataDir };
    databaseEnv = { registry: { MARKET_DATA_DIR: dataDir }, facilitator: { MARKET_DATA_DIR: join(work, 'facilitator-data') } };
  }

  const [registryPort, facilitatorPort] = [await freePort(), await freePort()];
  registryUrl = `http://127.0.0.1:${registryPort}`;
  facilitatorUrl = `http://127.0.0.1:${facilitatorPort}`;
  registry = market('registry', ['registry', '--port', String(registryPort)], {
    ...common,
    ...databaseEnv.registry,
    PUBLIC_URL: registryUrl,
    AUTH_JWT_SECRET: 'e2e-secret-that-is-at-least-32-characters',
    MARKET_ALLOW_HTTP_ENDPOINTS: 'true',
    MARKET_NETWORK: chain.network,
    MARKET_USDC_ADDRESS: chain.token.address,
    MARKET_RPC_URL: chain.rpcUrl,
    MARKET_BALANCE_CACHE_MS: '0',
    // Paid calls count once verified on chain: check reported payments in the background, quickly.
    MARKET_PAYMENT_VERIFICATION: 'on',
    MARKET_PAYMENT_VERIFY_INTERVAL_MS: '100',
    RATE_LIMIT_AUTH: 'off',
    RATE_LIMIT_WRITE: 'off',
    RATE_LIMIT_READ: 'off',
  });
  facilitator = market('facilitator', ['facilitator', '--port', String(facilitatorPort)], {
    ...common,
    ...databaseEnv.facilitator,
    FACILITATOR_PRIVATE_KEY: chain.accounts.relayer.privateKey,
    FACILITATOR_RPC_URL: chain.rpcUrl,
    FACILITATOR_NETWORK: chain.network,
    FACILITATOR_ASSETS: chain.token.address,
    FACILITATOR_POLL_INTERVAL_MS: '20',
  });
  const [health, supported] = await Promise.all([
    waitFor(registry, `${registryUrl}/health`),
    waitFor(facilitator, `${facilitatorUrl}/supported`),
  ]);
  expect(health).toMatchObject({ status: 'ok', database: TEST_DATABASE_URL ? 'postgres' : 'embedded' });
  expect(supported).toMatchObject({
    kinds: expect.arrayContaining([{ x402Version: 2, scheme: 'exact', network: chain.network }]),
    signers: { 'eip155:*': [chain.accounts.relayer.address] },
  });
}, 60_000);

afterAll(async () => {
  // Normally every process has already been stopped (and checked) by the last test.
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await chain?.stop();
  await dropPostgresDatabase();
  rmSync(work, { recursive: true, force: true });
});

describe(`the marketplace end to end, every piece its own process (${DATABASE} database)`, () => {
  it(
    'a creator signs in with a wallet over HTTP, creates the groups the example skills name, and a creator key',
    async () => {
      payee = chain.accounts.payee.address; // the creator is paid into the wallet they sign in with
      const session = await walletSignIn(request, chain.accounts.payee);
      expect(session.creator.walletAddress.toLowerCase()).toBe(payee.toLowerCase());
      creator.token = session.token;
      // examples/creator/skills.ts: echo is in "tools", word-count in "text".
      for (const name of ['tools', 'text']) {
        const res = await request('/groups', jsonPost({ name, description: `${name} skills` }, bearer(creator.token)));
        expect({ status: res.status, body: await res.json() }).toMatchObject({ status: 201, body: { name, slug: expect.any(String) } });
      }
      creator.key = (await createKey(request, creator.token, 'creator', 'skill server')).key;
      expect(creator.key).toMatch(/^sk_/);
    },
    STEP_MS,
  );

  it(
    'the skill server runs examples/creator/skills.ts from an empty folder and registers both skills',
    async () => {
      const dir = join(work, 'creator');
      mkdirSync(dir);
      copyFileSync(join(ROOT, 'examples/creator/skills.ts'), join(dir, 'skills.ts'));
      const port = await freePort();
      const endpoint = `http://127.0.0.1:${port}`;
      skillServer = market(
        'skill server',
        [
          'serve',
          'skills.ts',
          '--port',
          String(port),
          '--host',
          '127.0.0.1',
          '--endpoint',
          endpoint,
          '--facilitator',
          facilitatorUrl,
          '--network',
          chain.network,
          '--asset',
          chain.token.address,
        ],
        { MARKET_WALLET_ADDRESS: payee, MARKET_API_KEY: creator.key, MARKET_API_URL: registryUrl },
        dir,
      );
      expect(await waitFor(skillServer, `${endpoint}/health`)).toMatchObject({ status: 'ok', skills: ['echo', 'word-count'] });

      const skills = await lastReading(
        () => getJson<Skill[]>(`/skills?creator=${payee}`),
        (list) => list.length === 2,
      );
      expect(skills.map((s) => s.name).sort()).toEqual(['echo', 'word-count']);
      for (const s of skills) listed[s.name] = s;
      expect(listed['word-count']).toMatchObject({
        endpoint: `${endpoint}/word-count`,
        price: '$0.002',
        priceAtomic: PRICE.toString(),
        paymentAddress: payee,
        network: chain.network,
        groups: ['text'],
        inputSchema: { required: ['text'] },
        outputSchema: { required: ['words', 'characters'] },
      });
      expect(listed.echo).toMatchObject({ endpoint: `${endpoint}/echo`, price: '$0.001', groups: ['tools'], inputSchema: null });
      // What the creator sees with the key the server used.
      expect((await getJson<Skill[]>('/creators/me/skills', bearer(creator.key))).length).toBe(2);
    },
    STEP_MS,
  );

  it(
    'a consumer signs in, makes a consumer key and finds the skill by search',
    async () => {
      const session = await walletSignIn(request, newWallet());
      consumer.userId = session.creator.id;
      consumer.token = session.token;
      consumer.key = (await createKey(request, consumer.token, 'consumer', 'agent')).key;
      expect(consumer.key).toMatch(/^ck_/);

      const browsing = new SkillMarket({ apiUrl: registryUrl, apiKey: consumer.key, network: chain.network });
      const { skills } = await browsing.search('count words');
      expect(skills.map((s) => s.name)).toEqual(['word-count']);
      expect(skills[0]).toMatchObject({ id: listed['word-count']!.id, slug: listed['word-count']!.slug, price: '$0.002' });
      expect((await browsing.search('', { group: 'tools' })).skills.map((s) => s.name)).toEqual(['echo']);
    },
    STEP_MS,
  );

  it(
    'the consumer makes a spending wallet with the SDK: key kept in a keystore here, only the address registered',
    async () => {
      const sent: { method: string; url: string; body: string }[] = [];
      const recording = (async (input: string | URL | Request, init?: RequestInit) => {
        sent.push({ method: init?.method ?? 'GET', url: String(input), body: typeof init?.body === 'string' ? init.body : '' });
        return fetch(input, init);
      }) as typeof fetch;
      const dir = join(work, 'consumer-wallets');
      const created = await createSpendingWallet({
        apiUrl: registryUrl,
        apiKey: consumer.key,
        passphrase: PASSPHRASE,
        keystorePath: (address) => join(dir, `${address}.json`),
        label: 'e2e agent',
        keystore: { scrypt: { n: 1024 } },
        fetch: recording,
      });
      consumer.wallet = created.address;
      consumer.keystorePath = created.keystorePath;
      expect(created.wallet).toMatchObject({ address: created.address, label: 'e2e agent', isActive: true });

      expect(existsSync(created.keystorePath)).toBe(true);
      expect(statSync(created.keystorePath).mode & 0o777).toBe(0o600);
      consumer.account = await loadSpendingWallet({ keystorePath: created.keystorePath, passphrase: PASSPHRASE });
      expect(consumer.account.address).toBe(created.address);

      // Two requests went out: the registry's message for the wallet, then the address and label with
      // the new key's signature of that message (a proof, nothing secret).
      expect(sent.map((r) => [r.method, r.url])).toEqual([
        ['POST', `${registryUrl}/wallet/challenge`],
        ['POST', `${registryUrl}/wallet/generate`],
      ]);
      expect(sent[0]!.body).toBe(JSON.stringify({ address: created.address }));
      const registered = JSON.parse(sent[1]!.body);
      expect(registered).toMatchObject({ address: created.address, label: 'e2e agent' });
      expect(await verifyMessage({ address: created.address, ...registered.proof })).toBe(true);
      const keystore = readFileSync(created.keystorePath, 'utf8');
      expect(JSON.parse(keystore)).toMatchObject({ version: 3, crypto: { kdf: 'scrypt', cipher: 'aes-128-ctr' } });
    },
    STEP_MS,
  );

  it(
    'funds minted to the wallet on chain show in GET /wallet as its live balance',
    async () => {
      const empty = await getJson('/wallet', bearer(consumer.key));
      expect(empty).toMatchObject({
        address: consumer.wallet,
        isActive: true,
        network: chain.network,
        balance: '0.000000',
        balanceAtomic: '0',
      });

      await chain.mint(consumer.wallet, FUNDING);
      const onChain = await chain.balanceOf(consumer.wallet);
      expect(onChain).toBe(FUNDING);
      const funded = await getJson<{ balance: string; balanceAtomic: string; asset: string }>('/wallet', bearer(consumer.key));
      expect(funded).toMatchObject({ address: consumer.wallet, balance: '1.000000', balanceAtomic: onChain.toString() });
      expect(funded.asset.toLowerCase()).toBe(chain.token.address.toLowerCase());
    },
    STEP_MS,
  );

  it(
    'the consumer favourites the skill',
    async () => {
      const market = consumerMarket();
      expect(await market.favorite(listed['word-count']!.slug)).toEqual({ favorited: true, favoriteCount: 1 });
    },
    STEP_MS,
  );

  it(
    'refuses a call whose maxPrice is below the listed price before signing or sending anything; nothing moves',
    async () => {
      payeeBefore = await chain.balanceOf(payee);
      const signer = counting(consumer.account);
      const requests: string[] = [];
      const market = consumerMarket({
        wallet: signer,
        fetch: (input, init) => {
          requests.push(String(input instanceof Request ? input.url : input));
          return fetch(input, init);
        },
      });
      const error = await market.call(listed['word-count']!.slug, { text: 'too dear' }, { maxPrice: '$0.001' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SpendingLimitError);
      expect(error).toMatchObject({ code: 'max_price_exceeded', charged: 'no', limit: 'maxPrice', price: PRICE, allowed: 1_000n });
      expect(signer.signatures).toBe(0);
      expect(requests.some((url) => url.startsWith(listed['word-count']!.endpoint))).toBe(false);
      expect(market.spending.spent).toBe(0n);
      expect(await chain.balanceOf(consumer.wallet)).toBe(FUNDING);
      expect(await chain.balanceOf(payee)).toBe(payeeBefore);
    },
    STEP_MS,
  );

  it(
    'pays for three calls with callWithReceipt: results, exactly three times the price moved, three distinct transactions',
    async () => {
      const market = consumerMarket();
      const texts = ['one two three', 'paid per call', 'four words in here'];
      for (const text of texts) {
        const { result, receipt, skill } = await market.callWithReceipt<{ words: number; characters: number }>(listed['word-count']!.slug, {
          text,
        });
        expect(result).toEqual({ words: text.split(/\s+/).length, characters: text.length });
        expect(skill.id).toBe(listed['word-count']!.id);
        // A copy: bun's toMatchObject writes asymmetric matchers into the object it checks.
        expect({ ...receipt }).toMatchObject({
          skillId: listed['word-count']!.id,
          amount: PRICE.toString(),
          price: '$0.002',
          payTo: payee,
          payer: consumer.wallet,
          network: chain.network,
          asset: chain.token.address,
          transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        });
        receipts.push(receipt!);
      }
      await market.flush(); // the usage records reach the registry
      expect(backgroundErrors).toEqual([]);
      expect(market.spending.spent).toBe(3n * PRICE);

      expect(new Set(receipts.map((r) => r.transaction)).size).toBe(3);
      expect(await chain.balanceOf(consumer.wallet)).toBe(FUNDING - 3n * PRICE);
      expect(await chain.balanceOf(payee)).toBe(payeeBefore + 3n * PRICE);
      for (const { transaction } of receipts) {
        const mined = await chain.publicClient.getTransactionReceipt({ hash: transaction! });
        expect(mined.status).toBe('success');
        const transfers = parseEventLogs({ abi: usdCoinAbi, eventName: 'Transfer', logs: mined.logs });
        expect(transfers.map((t) => ({ token: t.address.toLowerCase(), ...t.args }))).toEqual([
          { token: chain.token.address.toLowerCase(), from: consumer.wallet, to: payee, value: PRICE },
        ]);
      }
    },
    STEP_MS,
  );

  it(
    'the facilitator has each receipt confirmed with the right payer, payee and amount',
    async () => {
      for (const { transaction } of receipts) {
        // Answered in broadcast mode: the facilitator marks the receipt confirmed once it sees the block.
        const stored = await eventually(
          async () => {
            const res = await fetch(`${facilitatorUrl}/receipts/${transaction}`);
            return res.status === 200 ? ((await res.json()) as Record<string, unknown>) : { status: `HTTP ${res.status}` };
          },
          (r) => r.status === 'confirmed',
          `the facilitator confirms ${transaction}`,
          STEP_MS / 2,
        );
        expect(stored).toMatchObject({
          transaction,
          status: 'confirmed',
          network: chain.network,
          payer: consumer.wallet,
          payee,
          amount: PRICE.toString(),
          relayer: chain.accounts.relayer.address,
        });
        expect(String(stored.asset).toLowerCase()).toBe(chain.token.address.toLowerCase());
      }
    },
    STEP_MS,
  );

  it(
    'the registry counts the calls the skill server reported, the revenue from usage, the favourite, and the balance follows the chain',
    async () => {
      const skillId = listed['word-count']!.id;
      const slug = listed['word-count']!.slug;
      // The skill server posts /analytics/call off the response path: wait for the third.
      const analytics = await lastReading(
        () =>
          getJson<{
            callCount: number;
            favoriteCount: number;
            totalRevenue: string;
            totalRevenueAtomic: string;
            daily: { calls: number; revenue: string }[];
          }>(`/analytics/${skillId}`),
        (a) => a.callCount >= 3,
      );
      expect(analytics).toMatchObject({
        skillId,
        callCount: 3,
        favoriteCount: 1,
        totalRevenue: '0.006',
        totalRevenueAtomic: (3n * PRICE).toString(),
      });
      expect(analytics.daily.at(-1)).toMatchObject({ calls: 3, revenue: '0.006' });
      expect(await getJson(`/skills/${slug}`)).toMatchObject({ callCount: 3, favoriteCount: 1 });
      expect(await getJson(`/analytics/${listed.echo!.id}`)).toMatchObject({ callCount: 0, favoriteCount: 0, totalRevenueAtomic: '0' });

      const wallet = await getJson<{ balanceAtomic: string }>('/wallet', bearer(consumer.key));
      expect(wallet.balanceAtomic).toBe((await chain.balanceOf(consumer.wallet)).toString());
      expect(BigInt(wallet.balanceAtomic)).toBe(FUNDING - 3n * PRICE);
    },
    STEP_MS,
  );

  it(
    'every process stops on SIGTERM with exit code 0; the records outlive them: usage under the consumer, paymentRef = tx',
    async () => {
      // The skill server first (it delivers pending call records), then the rest together.
      const codes: Record<string, number> = {};
      codes['skill server'] = await stop(skillServer!);
      const [r, f] = await Promise.all([stop(registry), stop(facilitator)]);
      codes.registry = r;
      codes.facilitator = f;
      expect(codes).toEqual({ 'skill server': 0, registry: 0, facilitator: 0 });
      for (const p of procs)
        expect({ name: p.name, slow: p.output().includes('shutdown took too long') }).toEqual({ name: p.name, slow: false });
      const messages = skillServer!
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(messages).toEqual(
        expect.arrayContaining([
          '  POST /word-count  0.002 USDC  Counts the words and characters of a text',
          `registered "echo" as ${listed.echo!.slug}`,
          `registered "word-count" as ${listed['word-count']!.slug}`,
          'shutting down',
        ]),
      );

      const handle: DatabaseHandle =
        'url' in registryDatabase
          ? await openDatabase({ kind: 'postgres', url: registryDatabase.url, poolSize: 1 }, { migrate: false })
          : await openEmbedded(registryDatabase.dataDir);
      try {
        const skillId = listed['word-count']!.id;
        const usage = await handle.db
          .select({ userId: usageRecords.userId, amount: usageRecords.amount, paymentRef: usageRecords.paymentRef })
          .from(usageRecords)
          .where(eq(usageRecords.skillId, skillId));
        const byRef = (a: { paymentRef: string | null }, b: { paymentRef: string | null }) =>
          String(a.paymentRef).localeCompare(String(b.paymentRef));
        const transactions = receipts.map((x) => x.transaction as Hex);
        expect(usage.sort(byRef)).toEqual(
          transactions.map((tx) => ({ userId: consumer.userId, amount: PRICE, paymentRef: tx })).sort(byRef),
        );
        // The skill server's call records: one per settled call, keyed by the same transactions.
        const calls = await handle.db
          .select({ paymentRef: skillCalls.paymentRef, amount: skillCalls.amount })
          .from(skillCalls)
          .where(eq(skillCalls.skillId, skillId));
        expect(calls.sort(byRef)).toEqual(transactions.map((tx) => ({ amount: PRICE, paymentRef: tx })).sort(byRef));
      } finally {
        await handle.close();
      }
    },
    STEP_MS,
  );
});

/** The consumer's client: pays from the spending wallet, on the chain, in our token, under limits. */
function consumerMarket(overrides: { wallet?: LocalAccount; fetch?: FetchLike } = {}): SkillMarket {
  return new SkillMarket({
    apiUrl: registryUrl,
    apiKey: consumer.key,
    wallet: overrides.wallet ?? consumer.account,
    network: chain.network,
    assets: [{ network: chain.network, address: chain.token.address, name: chain.token.name, version: chain.token.version }],
    maxPrice: '$0.01',
    budget: '$0.05',
    // This story follows exact payments (a transaction per call); the skill server also offers
    // payment channels, which have their own tests (test/creator/channels.*).
    payment: 'exact',
    ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
    onBackgroundError: (error) => backgroundErrors.push(error),
  });
}

/** The account, with its typed-data signatures counted. */
function counting(account: LocalAccount): LocalAccount & { signatures: number } {
  const counted = Object.assign(Object.create(account) as LocalAccount, { signatures: 0 });
  counted.signTypedData = (async (data: Parameters<LocalAccount['signTypedData']>[0]) => {
    counted.signatures++;
    return account.signTypedData(data);
  }) as LocalAccount['signTypedData'];
  return counted;
}
