/**
 * Our client pays the x402 reference `batch-settlement` server (@x402/hono with @x402/evm's server
 * scheme, settling through @x402/evm's facilitator) over payment channels of our contract on the
 * local chain: one deposit, then off-chain vouchers; the channel survives a new client (its file)
 * and a lost file (the chain and the server's corrective 402); a server that over-charges is
 * caught and gets no more vouchers. The steps share one channel, so they run in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchSettlementEvmScheme as ServerScheme } from '@x402/evm/batch-settlement/server';
import { ExactEvmScheme as ExactServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono, type MiddlewareHandler } from 'hono';
import { MarketError, type Skill } from 'skill-market';
import { batchSettlementDomain, decodeBase64Json, encodeBase64Json, voucherTypes } from 'skill-market/x402';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../src/chain/batch-settlement';
import type { Address, Hex } from 'viem';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import type { TestAccount } from '../support/chain';
import { PersistentBudget } from '../../src/mcp/ledger';
import { createMcpServer } from '../../src/mcp/server';
import { inProcessClient, tool } from '../mcp/support';
import { spawnMarket } from '../support/process';
import { countingAccount, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 1_000n; // $0.001
const DEPOSIT = 10n * PRICE; // maxDeposit below
const stops: (() => unknown)[] = [];
let folder: string;
let payer: TestAccount;
let honest: { skill: Skill; payee: Address; handled: number };
let greedy: { skill: Skill; payee: Address; handled: number };
let overcharging: { skill: Skill; payee: Address; handled: number };
let both: { skill: Skill; payee: Address; handled: number };
let forging: { skill: Skill; payee: Address; handled: number };

/**
 * A reference batch-settlement server for one paid POST route; `rewrite` alters its
 * PAYMENT-RESPONSE; with `exact` it offers `exact` too (first).
 */
async function referenceServer(name: string, rewrite?: (response: Record<string, any>) => void, exact = false, front?: MiddlewareHandler) {
  const facilitator = startBatchFacilitator(world.chain, await world.chain.createAccount());
  stops.push(facilitator.stop);
  const payee = await world.payee();
  const authorizer = await world.chain.createAccount();
  const scheme = new ServerScheme(payee, { receiverAuthorizerSigner: authorizer, withdrawDelay: 900 });
  const resourceServer = new x402ResourceServer(facilitator.client).register(world.chain.network, scheme);
  if (exact) resourceServer.register(world.chain.network, new ExactServerScheme());
  const { address, name: tokenName, version } = world.chain.token;
  const price = { amount: PRICE.toString(), asset: address, extra: { name: tokenName, version } };
  const state = { handled: 0 } as { skill: Skill; payee: Address; handled: number };
  const app = new Hono();
  if (front) app.use(front);
  if (rewrite) {
    app.use(async (c, next) => {
      await next();
      const header = c.res.headers.get('PAYMENT-RESPONSE');
      if (!header) return;
      const response = decodeBase64Json(header, 'malformed_settle_response', 'receipt') as Record<string, any>;
      rewrite(response);
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set('PAYMENT-RESPONSE', encodeBase64Json(response));
    });
  }
  app.use(
    paymentMiddleware(
      {
        [`POST /${name}`]: {
          accepts: [
            ...(exact ? [{ scheme: 'exact', network: world.chain.network, payTo: payee, price }] : []),
            { scheme: 'batch-settlement', network: world.chain.network, payTo: payee, price },
          ],
          description: name,
        },
      },
      resourceServer,
    ),
  );
  app.post(`/${name}`, async (c) => {
    state.handled++;
    return c.json({ echo: await c.req.json(), n: state.handled });
  });
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  stops.push(() => server.stop(true));
  const res = await world.creator.register({
    name,
    endpoint: `http://127.0.0.1:${server.port}/${name}`,
    price: '$0.001',
    paymentAddress: payee,
    network: world.chain.network,
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  state.skill = (await res.json()) as Skill;
  state.payee = payee;
  return state;
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'channels-'));
  payer = await world.payer();
  honest = await referenceServer(`channel-${crypto.randomUUID().slice(0, 8)}`);
  greedy = await referenceServer(`greedy-${crypto.randomUUID().slice(0, 8)}`, (response) => {
    response.extra.channelState.chargedCumulativeAmount = (BigInt(response.extra.channelState.chargedCumulativeAmount) + 1n).toString();
  });
  overcharging = await referenceServer(`over-${crypto.randomUUID().slice(0, 8)}`, (response) => {
    response.extra.chargedAmount = (BigInt(response.extra.chargedAmount) + 1n).toString();
    response.extra.channelState.chargedCumulativeAmount = (BigInt(response.extra.channelState.chargedCumulativeAmount) + 1n).toString();
  });
  both = await referenceServer(`both-${crypto.randomUUID().slice(0, 8)}`, undefined, true);
  // Answers every paid request with a corrective 402 claiming a charge on a voucher someone else signed.
  const forger = await world.chain.createAccount();
  let terms: string | undefined;
  forging = await referenceServer(`forging-${crypto.randomUUID().slice(0, 8)}`, undefined, false, async (c, next) => {
    const proof = c.req.header('payment-signature');
    if (!proof) {
      await next();
      terms ??= c.res.headers.get('PAYMENT-REQUIRED') ?? undefined;
      return;
    }
    const { voucher } = (decodeBase64Json(proof, 'malformed_payment', 'payment') as { payload: { voucher: { channelId: Hex } } }).payload;
    const required = decodeBase64Json(terms, 'malformed_payment_required', 'terms') as { accepts: { extra: Record<string, unknown> }[] };
    const signature = await forger.signTypedData({
      domain: batchSettlementDomain(world.chain.chainId),
      types: voucherTypes,
      primaryType: 'Voucher',
      message: { channelId: voucher.channelId, maxClaimableAmount: 50n * PRICE },
    });
    required.accepts[0]!.extra.channelState = { channelId: voucher.channelId, chargedCumulativeAmount: `${50n * PRICE}` };
    required.accepts[0]!.extra.voucherState = { signedMaxClaimable: `${50n * PRICE}`, signature };
    const body = { ...required, error: 'invalid_batch_settlement_evm_cumulative_amount_mismatch' };
    return c.body(null, 402, { 'PAYMENT-REQUIRED': encodeBase64Json(body) });
  });
}, 60_000);

afterAll(async () => {
  for (const stop of stops) await stop();
  await rm(folder, { recursive: true, force: true });
});

const channelFile = () => join(folder, 'channels.json');
const channelClient = (extra: Record<string, unknown> = {}) =>
  world.market({ wallet: payer, payment: 'channel', maxDeposit: '$0.01', channels: channelFile(), rpcUrl: world.chain.rpcUrl, ...extra });
const onChain = async (channelId: Hex) =>
  world.chain.publicClient.readContract({
    address: BATCH_SETTLEMENT_ADDRESS,
    abi: batchSettlementAbi,
    functionName: 'channels',
    args: [channelId],
  });

describe('paying the reference batch-settlement server', () => {
  let channelId: Hex;

  it('opens one channel with one deposit and pays every later call with a voucher: no transaction per call, the budget counts charges', async () => {
    const market = channelClient({ budget: '$1' });
    const payerBefore = await world.chain.balanceOf(payer.address);
    const first = await market.callWithReceipt(honest.skill.slug, { i: 1 });
    expect(first.result).toEqual({ echo: { i: 1 }, n: 1 });
    expect(first.receipt).toMatchObject({ amount: '1000', payTo: honest.payee, payer: payer.address });
    expect(first.receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/); // the deposit
    const block = await world.chain.publicClient.getBlockNumber();
    for (let i = 2; i <= 5; i++) {
      const { result, receipt } = await market.callWithReceipt(honest.skill.slug, { i });
      expect(result).toEqual({ echo: { i }, n: i });
      expect(receipt).toMatchObject({ amount: '1000', transaction: null });
    }
    expect(await world.chain.publicClient.getBlockNumber()).toBe(block);
    expect(await world.chain.balanceOf(payer.address)).toBe(payerBefore - DEPOSIT);
    expect(market.spending).toMatchObject({ spent: 5n * PRICE, reserved: 0n, remaining: 1_000_000n - 5n * PRICE });

    const [channel, ...others] = await market.channels();
    expect(others).toEqual([]);
    expect(channel).toMatchObject({ receiver: honest.payee, deposit: `${DEPOSIT}`, charged: `${5n * PRICE}`, claimed: '0' });
    channelId = channel!.channelId;
    expect(await onChain(channelId)).toEqual([DEPOSIT, 0n]);
  });

  it('keeps the channel across clients: a new SkillMarket on the same file signs on from the last charge, without the chain', async () => {
    const stored = JSON.parse(await readFile(channelFile(), 'utf8'));
    expect(stored.channels[channelId.toLowerCase()]).toMatchObject({ charged: `${5n * PRICE}`, balance: `${DEPOSIT}` });
    const account = countingAccount(payer);
    const market = channelClient({ wallet: account, rpcUrl: undefined });
    const block = await world.chain.publicClient.getBlockNumber();
    expect(await market.call(honest.skill.slug, { i: 6 })).toEqual({ echo: { i: 6 }, n: 6 });
    expect(account.signatures).toBe(2); // one voucher and the next call's, signed ahead; no deposit, no re-signing
    expect(await world.chain.publicClient.getBlockNumber()).toBe(block);
    expect((await market.channels())[0]).toMatchObject({ charged: `${6n * PRICE}`, deposit: `${DEPOSIT}` });
  });

  it('recovers a lost record from the chain and the server’s corrective 402, checking the voucher there is its own', async () => {
    await rm(channelFile());
    const account = countingAccount(payer);
    const market = channelClient({ wallet: account });
    expect(await market.call(honest.skill.slug, { i: 7 })).toEqual({ echo: { i: 7 }, n: 7 });
    // Recovered base: the chain's 0 claimed, refused (nothing signed ahead on a recovered record); then the server's
    // own 6 calls, re-signed once, and the next call's voucher signed ahead.
    expect(account.signatures).toBe(3);
    expect((await market.channels())[0]).toMatchObject({ charged: `${7n * PRICE}`, deposit: `${DEPOSIT}`, claimed: '0' });
    expect(await onChain(channelId)).toEqual([DEPOSIT, 0n]);
  });

  it('signs the vouchers of concurrent calls one at a time, each on the last charge', async () => {
    const account = countingAccount(payer);
    const market = channelClient({ wallet: account });
    const results = await Promise.all([8, 9, 10].map((i) => market.call<{ echo: { i: number } }>(honest.skill.slug, { i })));
    expect(results.map((r) => r.echo.i)).toEqual([8, 9, 10]);
    // Three vouchers (two of them signed ahead), none refused and signed again, none for an 11th call past the 10 deposited.
    expect(account.signatures).toBe(3);
    expect((await market.channels())[0]).toMatchObject({ charged: `${10n * PRICE}`, deposit: `${DEPOSIT}` });
    expect(honest.handled).toBe(10);
  });

  it('catches a server whose cumulative charge is not its own plus the charge, and signs nothing more for it', async () => {
    const market = channelClient({ budget: '$1' });
    const error = await market.call(greedy.skill.slug, { i: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MarketError);
    expect(error).toMatchObject({ code: 'channel_stopped', charged: 'unknown' });
    expect((error as Error).message).toContain('cumulative charge 1001');
    expect(market.spending.spent).toBe(PRICE); // what the voucher signed may be claimed
    const stopped = (await market.channels()).find((c) => c.receiver === greedy.payee);
    expect(stopped?.stopped).toContain('cumulative charge');

    const handled = greedy.handled;
    const again = await market.call(greedy.skill.slug, { i: 2 }).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'channel_stopped', charged: 'no' });
    expect(greedy.handled).toBe(handled);
    expect(market.spending.spent).toBe(PRICE);
  });

  it('catches a server that charges more than it asked', async () => {
    const market = channelClient();
    const error = await market.call(overcharging.skill.slug, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'channel_stopped', charged: 'unknown' });
    expect((error as Error).message).toContain('charged 1001, more than the 1000 it asked');
    expect(await market.call(overcharging.skill.slug, {}).catch((e: unknown) => e)).toMatchObject({ code: 'channel_stopped' });
    expect(overcharging.handled).toBe(1);
  });

  it('refuses a corrective 402 whose voucher it did not sign, and keeps its own record', async () => {
    const account = countingAccount(await world.payer());
    const market = channelClient({ wallet: account });
    const error = await market.call(forging.skill.slug, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'payment_rejected', charged: 'no' });
    expect((error as Error).message).toContain('cannot verify');
    expect(account.signatures).toBe(2); // the deposit and its voucher, never a voucher on the forged charge
    expect(forging.handled).toBe(0);
    const channel = (await market.channels()).find((c) => c.receiver === forging.payee);
    expect(channel).toMatchObject({ charged: '0', deposit: '0' });
  });

  it('with payment auto, pays exact when maxDeposit covers fewer than three calls, and opens a channel when it covers more', async () => {
    const auto = await world.payer();
    const small = world.market({ wallet: auto, maxDeposit: '$0.002', rpcUrl: world.chain.rpcUrl });
    const before = await world.chain.balanceOf(both.payee);
    const exact = await small.callWithReceipt(both.skill.slug, { i: 1 });
    expect(exact.receipt!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await world.chain.balanceOf(both.payee)).toBe(before + PRICE);
    expect(await small.channels()).toEqual([]);

    const large = world.market({ wallet: auto, maxDeposit: '$0.01', rpcUrl: world.chain.rpcUrl });
    await large.call(both.skill.slug, { i: 2 });
    expect(await large.channels()).toMatchObject([{ receiver: both.payee, deposit: `${DEPOSIT}`, charged: `${PRICE}` }]);
    expect(await world.chain.balanceOf(both.payee)).toBe(before + PRICE); // the voucher is not claimed yet
  });

  it('counts voucher charges in the MCP server budget as exact payments, never the deposit', async () => {
    const dataDir = join(folder, 'mcp');
    const limits = {
      maxPrice: 100_000n,
      budget: 2n * PRICE + PRICE / 2n,
      period: 'day' as const,
      confirmAbove: undefined,
      allow: undefined,
    };
    const budget = new PersistentBudget(dataDir, limits.budget, limits.period);
    const agent = await world.payer();
    const start = await world.chain.balanceOf(agent.address);
    const server = createMcpServer({
      market: world.market({ wallet: agent, maxDeposit: '$0.01', channels: join(dataDir, 'channels.json') }),
      budget,
      config: { apiUrl: world.registryUrl, network: world.chain.network, assets: [world.chain.token.address], rpcUrl: undefined, limits },
      noWallet: undefined,
    });
    const client = await inProcessClient(server);
    try {
      for (const i of [1, 2]) expect((await tool(client, 'call_skill', { slug: both.skill.slug, input: { i } })).isError).toBeFalsy();
      expect((await budget.snapshot()).spent).toBe(2n * PRICE);
      // One deposit went out: ten calls' worth would be more than the budget leaves, so it stops there.
      expect(await world.chain.balanceOf(agent.address)).toBe(start - limits.budget);
      const refused = await tool(client, 'call_skill', { slug: both.skill.slug, input: { i: 3 } });
      expect(refused.structuredContent.error.code).toBe('budget_exceeded');
      expect((await budget.recent(5)).map((c) => c.amount)).toEqual([`${PRICE}`, `${PRICE}`]);
    } finally {
      await client.close();
    }
  });

  it('pays from the command line over a channel kept in the config folder; market channels lists it, starts its withdrawal and finalizes it', async () => {
    const cliPayer = await world.payer();
    const env = {
      XDG_CONFIG_HOME: join(folder, 'config'),
      MARKET_API_URL: world.registryUrl,
      MARKET_PRIVATE_KEY: cliPayer.privateKey,
      MARKET_RPC_URL: world.chain.rpcUrl,
    };
    const market = async (args: string[]) => {
      const child = spawnMarket([...args, '--network', world.chain.network, '--asset', world.chain.token.address], env, folder);
      const [code, stdout, stderr] = await Promise.all([
        child.exited,
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
      ]);
      return { code, stdout, stderr };
    };
    const call = await market(['call', honest.skill.slug, '{"i":"cli"}', '--payment', 'channel', '--max-deposit', '$0.01']);
    expect(call).toMatchObject({ code: 0 });
    expect(JSON.parse(call.stdout)).toMatchObject({ echo: { i: 'cli' } });

    const listed = await market(['channels', '--json']);
    expect(listed.code).toBe(0);
    const [channel, ...others] = JSON.parse(listed.stdout) as { channelId: Hex; deposit: string; charged: string; claimed: string }[];
    expect(others).toEqual([]);
    expect(channel).toMatchObject({ receiver: honest.payee, deposit: `${DEPOSIT}`, charged: `${PRICE}`, claimed: '0' });

    const withdrawn = await market(['channels', '--withdraw', channel!.channelId, '--json']);
    expect(withdrawn.code).toBe(0);
    expect(JSON.parse(withdrawn.stdout)).toMatchObject({ channelId: channel!.channelId, withdrawing: `${DEPOSIT}`, withdrawDelay: 900 });
    const [pending] = await world.chain.publicClient.readContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: 'pendingWithdrawals',
      args: [channel!.channelId],
    });
    expect(pending).toBe(DEPOSIT);

    // After the channel's withdraw delay the payer finalizes: the voucher the server never claimed is lost to it.
    await world.chain.testClient.increaseTime({ seconds: 900 });
    await world.chain.testClient.mine({ blocks: 1 });
    const before = await world.chain.balanceOf(cliPayer.address);
    const finalized = await market(['channels', '--finalize', channel!.channelId, '--json']);
    expect(finalized.code).toBe(0);
    expect(JSON.parse(finalized.stdout)).toMatchObject({ channelId: channel!.channelId, finalized: true });
    expect(await world.chain.balanceOf(cliPayer.address)).toBe(before + DEPOSIT);
  });
});
