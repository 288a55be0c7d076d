/**
 * Faults in the middle of settlement, every payment piece in its own process: anvil mining a block
 * a second, a TCP proxy in front of its RPC that the test cuts, the facilitator and the skill
 * server (`bun src/cli/main.ts`; the facilitator's database survives its restart: PostgreSQL when
 * TEST_DATABASE_URL is set, else an embedded one in a data folder), the registry in process (it
 * receives call tracking), the SDK client here.
 *
 * Whatever breaks mid-settlement (the facilitator SIGKILLed and restarted, the RPC cut), the payer
 * is debited exactly (results delivered) × price, every debited call's result reaches its client
 * (on the held request, or a retry of its proof) and comes back to a later retry of the proof, no
 * result leaves without a confirmed transfer, the client's `charged` is what
 * the chain says, and the registry counts each paid call once.
 *
 * Mining is paused while the calls settle, so the transfers sit in the mempool at the moment of the
 * fault (an event the test waits for), then resumes at one block a second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { parseEventLogs, type Address, type Hex } from 'viem';
import { SkillMarket, type CallResult, type Skill } from 'skill-market';
import { decodePaymentPayload, X_PAYMENT_HEADER } from 'skill-market/x402';
import { skillCalls } from '../../src/db/schema';
import { newCreator } from '../support/catalogue';
import { eventually } from '../support/eventually';
import { type LocalChain, startChain, type TestAccount, usdCoinAbi } from '../support/chain';
import { freePort, startMarket, waitForJson, type MarketProcess } from '../support/process';
import { createMigratedPostgresDatabase, seedEmbeddedDataDir, TEST_DATABASE_URL } from '../support/database';
import { registryFixture } from '../support/registry';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const CALLS = 8;
const PRICE = 10_000n; // $0.01
const STEP_MS = 60_000;

const work = mkdtempSync(join(tmpdir(), 'market-faults-'));
const fx = registryFixture('embedded', { catalogue: { allowHttpEndpoints: true, viewWindowSeconds: 3600, newSkillsPerHour: 30 } });

let chain: LocalChain;
let rpc: TcpProxy;
let registry: ReturnType<typeof Bun.serve>;
let facilitator: MarketProcess;
let skillServer: MarketProcess;
let facilitatorPort: number;
let skillUrl: string;
let listing: Skill;
let facilitatorDatabase: Record<string, string>;
let dropDatabase: (() => Promise<void>) | undefined;
let payee: Address;
/** Every paid call's proof as the client sent it, with the answer it got. */
const sent: { proof: string; status: number }[] = [];
/** Transactions of the calls delivered so far. */
const delivered: Hex[] = [];

function startFacilitator(): MarketProcess {
  return startMarket(['facilitator', '--port', String(facilitatorPort), '--host', '127.0.0.1'], {
    LOG_LEVEL: 'info',
    ...facilitatorDatabase,
    FACILITATOR_PRIVATE_KEY: chain.accounts.relayer.privateKey,
    FACILITATOR_RPC_URL: rpc.url,
    FACILITATOR_NETWORK: chain.network,
    FACILITATOR_ASSETS: chain.token.address,
    FACILITATOR_POLL_INTERVAL_MS: '50',
    FACILITATOR_RECEIPT_TIMEOUT_MS: '2000',
    FACILITATOR_RECONCILE_INTERVAL_MS: '200',
  });
}

/** {@link eventually}, failing with the processes' output. */
const until = <T>(what: string, read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 30_000) =>
  eventually(read, done, what, timeoutMs, {
    context: () => `--- facilitator\n${facilitator.output()}\n--- skill server\n${skillServer.output()}`,
  });

const occurrences = (text: string, part: string) => text.split(part).length - 1;

beforeAll(async () => {
  // The chain first (every process needs it), then the facilitator and the registry side by side.
  chain = await startChain({ payers: 2, payees: 1, relayers: 1, anvilArgs: ['--block-time', '1'] });
  payee = chain.accounts.payee.address;
  rpc = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(chain.rpcUrl).port) });
  if (TEST_DATABASE_URL) {
    const created = await createMigratedPostgresDatabase();
    dropDatabase = created.drop;
    facilitatorDatabase = { DATABASE_URL: created.url, DATABASE_POOL_SIZE: '5' };
  } else {
    facilitatorDatabase = { MARKET_DATA_DIR: join(work, 'facilitator-data') };
    await seedEmbeddedDataDir(facilitatorDatabase.MARKET_DATA_DIR!); // no initdb in the process: it starts in a second
  }
  facilitatorPort = await freePort();
  facilitator = startFacilitator();

  registry = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => fx.registry.app.handle(request) });
  const registryUrl = `http://127.0.0.1:${registry.port}`;
  const creator = await newCreator(fx.request);
  await creator.prove(chain.accounts.payee);
  await creator.group('faults');
  const dir = join(work, 'creator');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'skills.ts'),
    `import { skill } from 'skill-market/creator';\nexport const echo = skill({ price: '$0.01', description: 'Echoes its input', groups: ['faults'] }, (input: unknown) => ({ echo: input }));\n`,
  );
  const port = await freePort();
  skillUrl = `http://127.0.0.1:${port}`;
  skillServer = startMarket(
    [
      'serve',
      'skills.ts',
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--endpoint',
      skillUrl,
      '--facilitator',
      `http://127.0.0.1:${facilitatorPort}`,
      '--network',
      chain.network,
      '--asset',
      chain.token.address,
      // These faults strike while the answer waits for the receipt (broadcast mode answers before it).
      '--settlement',
      'confirmed',
    ],
    // No RPC for the skill server: what it learns of a lost settlement, it learns from the facilitator.
    { LOG_LEVEL: 'info', MARKET_WALLET_ADDRESS: payee, MARKET_API_KEY: creator.key, MARKET_API_URL: registryUrl, MARKET_RPC_URL: '' },
    dir,
  );
  await Promise.all([waitForJson(`http://127.0.0.1:${facilitatorPort}/supported`), waitForJson(`${skillUrl}/health`)]);
  const listed = await until(
    'the skill server registers its skill',
    async () => (await (await fetch(`${registryUrl}/skills?creator=${creator.address}`)).json()) as Skill[],
    (l) => l.length === 1,
  );
  listing = listed[0]!;
  // Two processes started from source on a fresh database, then a registration: as long as the
  // other multi-process files allow on a loaded machine (test/e2e/facilitator-kill.system.test.ts).
}, 120_000);

afterAll(async () => {
  for (const p of [facilitator, skillServer]) p?.child.kill('SIGKILL');
  await Promise.all([facilitator?.exited, skillServer?.exited]);
  await registry?.stop(true);
  await rpc?.close();
  await chain?.stop();
  await dropDatabase?.();
  rmSync(work, { recursive: true, force: true });
});

/** A client paying from `payer`, with the chain to check `charged` against, recording its proofs. */
function client(payer: TestAccount): SkillMarket {
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    const proof = new Headers(init?.headers).get(X_PAYMENT_HEADER);
    if (proof) sent.push({ proof, status: res.status });
    return res;
  };
  const { address, name, version, decimals } = chain.token;
  return new SkillMarket({
    apiUrl: `http://127.0.0.1:${registry.port}`,
    network: chain.network,
    assets: [{ network: chain.network, address, name, version, decimals }],
    wallet: payer,
    rpcUrl: chain.rpcUrl,
    pendingTimeoutMs: 60_000,
    recordUsage: false,
    fetch: recording,
  });
}

/** Starts CALLS paid calls with mining paused; resolves once all their transfers wait in the mempool. */
async function callsInMempool(payer: TestAccount, tag: string): Promise<{ calls: Promise<PromiseSettledResult<CallResult<unknown>>[]> }> {
  await chain.testClient.setIntervalMining({ interval: 0 });
  const market = client(payer);
  const calls = Promise.allSettled(Array.from({ length: CALLS }, (_, i) => market.callWithReceipt(listing.slug, { tag, i })));
  await until(
    'every transfer reaches the mempool',
    () => chain.testClient.getTxpoolStatus(),
    (s) => s.pending === CALLS,
  );
  return { calls }; // wrapped: an async function returning a promise would wait for it
}

/** The books after a fault: debits, transfers, results, replays and call records all agree. */
async function expectBooksBalanced(
  payer: TestAccount,
  payerBefore: bigint,
  outcomes: PromiseSettledResult<CallResult<unknown>>[],
  tag: string,
) {
  const results = outcomes.map((o) => {
    if (o.status === 'rejected')
      throw new Error(`a call failed: ${String(o.reason)} (charged ${(o.reason as { charged?: string }).charged})`);
    return o.value;
  });
  // Delivered results × price left the payer, no more, no less.
  expect(await chain.balanceOf(payer.address)).toBe(payerBefore - BigInt(results.length) * PRICE);
  expect(results.map((r) => r.result).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
    Array.from({ length: CALLS }, (_, i) => ({ echo: { tag, i } })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
  );
  // No result without a confirmed transfer: each receipt names its own mined transfer of the price.
  const transactions = results.map((r) => r.receipt?.transaction);
  expect(new Set(transactions).size).toBe(CALLS);
  for (const hash of transactions) {
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: hash! });
    expect(receipt.status).toBe('success');
    const transfers = parseEventLogs({ abi: usdCoinAbi, eventName: 'Transfer', logs: receipt.logs });
    expect(transfers.map((t) => ({ from: t.args.from, to: t.args.to, value: t.args.value }))).toEqual([
      { from: payer.address, to: payee, value: PRICE },
    ]);
  }
  // What the client says it paid (a receipt with a transaction: charged) is what the chain says.
  for (const { receipt } of results) {
    const used = await chain.publicClient.readContract({
      address: chain.token.address,
      abi: usdCoinAbi,
      functionName: 'authorizationState',
      args: [payer.address, receipt!.nonce as Hex],
    });
    expect(used).toBe(true);
  }
  delivered.push(...(transactions as Hex[]));
  // Every debited call's result is had again by retrying its proof, with no second charge.
  const proofs = [...new Set(sent.filter((s) => decodePaymentPayload(s.proof).authorization.from === payer.address).map((s) => s.proof))];
  expect(proofs).toHaveLength(CALLS);
  for (const proof of proofs) {
    const input = results.find((r) => r.receipt?.nonce === decodePaymentPayload(proof).authorization.nonce)!;
    const again = await fetch(listing.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [X_PAYMENT_HEADER]: proof },
      body: JSON.stringify(input.result && (input.result as { echo: unknown }).echo),
    });
    expect(again.status).toBe(200);
    expect(again.headers.get('X-Payment-Replayed')).toBe('true');
    expect(((await again.json()) as { result: unknown }).result).toEqual(input.result);
  }
  expect(await chain.balanceOf(payer.address)).toBe(payerBefore - BigInt(results.length) * PRICE);
  // Call tracking counts each paid call once, by its transaction.
  const recorded = await until(
    'the registry records every paid call',
    () => fx.database.db.select({ paymentRef: skillCalls.paymentRef }).from(skillCalls).where(eq(skillCalls.skillId, listing.id)),
    (rows) => rows.length >= delivered.length,
  );
  expect(recorded.map((r) => r.paymentRef).sort()).toEqual([...delivered].sort());
}

describe(`money under faults mid-settlement (real processes, anvil --block-time 1, ${TEST_DATABASE_URL ? 'PostgreSQL' : 'embedded'} facilitator database)`, () => {
  it(
    'a facilitator SIGKILLed while transfers are in flight, then restarted: every call is delivered (to its held request or its proof retried), each charged once',
    async () => {
      const payer = chain.accounts.payers[0]!;
      const before = await chain.balanceOf(payer.address);
      const { calls } = await callsInMempool(payer, 'kill');

      facilitator.child.kill('SIGKILL');
      await facilitator.exited;
      await chain.testClient.setIntervalMining({ interval: 1 });
      await until(
        'the skill server holds the results',
        () => occurrences(skillServer.output(), 'result held'),
        (n) => n >= CALLS,
      );
      facilitator = startFacilitator();
      await expectBooksBalanced(payer, before, await calls, 'kill');
      // Each proof was answered its result once the outcome landed (the skill server held the
      // request), or "pending" past the hold and then retried (the same proof, never a new signature).
      expect(sent.filter((s) => s.status !== 200 && s.status !== 409)).toEqual([]);
    },
    STEP_MS,
  );

  it(
    'the RPC cut while transfers are in flight: the facilitator answers settlement_pending, the skill server holds the results, and releases them once the RPC is back',
    async () => {
      const payer = chain.accounts.payers[1]!;
      const before = await chain.balanceOf(payer.address);
      const held = occurrences(skillServer.output(), 'result held');
      const { calls } = await callsInMempool(payer, 'rpc');

      rpc.cut();
      await chain.testClient.setIntervalMining({ interval: 1 });
      await until(
        'the skill server holds the results',
        () => occurrences(skillServer.output(), 'result held') - held,
        (n) => n >= CALLS,
      );
      // The transfers are on chain by now; nobody on the payment path could see them.
      await until(
        'the transfers are mined',
        () => chain.balanceOf(payer.address),
        (balance) => balance === before - BigInt(CALLS) * PRICE,
      );
      rpc.restore();

      await expectBooksBalanced(payer, before, await calls, 'rpc');
    },
    STEP_MS,
  );
});
