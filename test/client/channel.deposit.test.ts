/**
 * One deposit policy on every side, shown before the first payment, and receipts that say deposit
 * and charge apart: SkillMarket, `market call` and `market mcp` deposit the same for the same skill
 * (the policy's figure: here the server's announced minDeposit, above ten calls' worth), each says
 * so before anything is signed (the quote, the command's stderr line before its paid request, the
 * tool's text), and each first receipt names the deposit beside the charge. `market mcp` never
 * deposits more than what its period's budget leaves. Our skill server, the reference facilitator,
 * the local chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { depositFor, type PaymentQuote } from 'skill-market/client';
import { createSkillHandler, skill, type SkillRequestHandler } from 'skill-market/creator';
import { textOf, tool } from '../mcp/support';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { eventually } from '../support/eventually';
import { spawnMarket } from '../support/process';
import { recordingLogger } from '../support/skill-server';
import { mcpClient } from './support/mcp';
import { countingAccount, useWorld } from './support/world';

const world = useWorld({ chain: true });
const PRICE = 1_000n; // $0.001
const MIN_DEPOSIT = 15_000n; // what the skill servers announce: more than ten calls' worth
/** The policy's deposit for a new channel to these skills, whoever pays. */
const DEPOSIT = depositFor({ price: PRICE, minDeposit: MIN_DEPOSIT, charged: 0n, balance: 0n });
let facilitator: ReturnType<typeof startBatchFacilitator>;
let folder: string;
const stops: (() => unknown)[] = [];

/**
 * A skill sold over channels by our handler behind a front that sees every paid request first
 * (`front.paid` runs before the handler gets it), listed in the registry.
 */
async function channelSkill() {
  const payee = await world.payee();
  const authorizer = await world.chain.createAccount();
  const name = `echo-${crypto.randomUUID().slice(0, 8)}`;
  const app: SkillRequestHandler = createSkillHandler(
    { [name]: skill({ price: '$0.001' }, (input: unknown) => ({ echo: input })) },
    {
      payTo: payee,
      facilitatorUrl: facilitator.url,
      network: world.chain.network,
      asset: world.asset,
      logger: recordingLogger(),
      channels: { receiverAuthorizerKey: authorizer.privateKey, store: join(folder, name), minDeposit: '$0.015' },
    },
  );
  const front = { paid: async (_request: Request): Promise<void> => undefined };
  const served = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      if (request.headers.has('payment-signature') || request.headers.has('x-payment')) await front.paid(request);
      return app.fetch(request);
    },
  });
  stops.push(
    () => served.stop(true),
    () => app.close(),
  );
  const res = await world.creator.register({
    name,
    endpoint: `http://127.0.0.1:${served.port}/${name}`,
    price: '$0.001',
    paymentAddress: payee,
    network: world.chain.network,
    groups: [world.group],
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  return { slug: ((await res.json()) as { slug: string }).slug, payee, front };
}

beforeAll(async () => {
  facilitator = startBatchFacilitator(world.chain, await world.chain.createAccount());
  folder = await mkdtemp(join(tmpdir(), 'channel-deposit-'));
}, 60_000);

afterAll(async () => {
  for (const stop of stops) await stop();
  facilitator?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** An MCP client of `market mcp`'s tools paying from `agent` within `budget` a day. */
function mcp(agent: Awaited<ReturnType<typeof world.payer>>, budget: bigint) {
  const dataDir = join(folder, `mcp-${agent.address}`);
  return mcpClient(world, dataDir, budget, { wallet: agent, channels: join(dataDir, 'channels.json') });
}

describe('one deposit policy, shown before the first payment', () => {
  it('SkillMarket: the quote says the deposit before anything is signed, and the receipt names it apart from the charge', async () => {
    expect(DEPOSIT).toBe(MIN_DEPOSIT);
    const echo = await channelSkill();
    const payer = await world.payer();
    const wallet = countingAccount(payer);
    const market = world.market({ wallet, payment: 'channel' });
    const start = await world.chain.balanceOf(payer.address);

    // Stopped at the quote: nothing signed, nothing moved.
    const stop = new Error('not now');
    let seen: PaymentQuote | undefined;
    const refused = market.call(
      echo.slug,
      { i: 0 },
      {
        beforePayment: (q) => {
          seen = q;
          throw stop;
        },
      },
    );
    expect(await refused.catch((e: unknown) => e)).toBe(stop);
    expect(seen).toMatchObject({ deposit: DEPOSIT, terms: { requirements: { scheme: 'batch-settlement', amount: `${PRICE}` } } });
    expect(wallet.signatures).toBe(0);

    const quotes: PaymentQuote[] = [];
    const first = await market.callWithReceipt(echo.slug, { i: 1 }, { beforePayment: (q) => void quotes.push(q) });
    expect(first.receipt).toMatchObject({ amount: `${PRICE}`, deposit: `${DEPOSIT}`, transaction: expect.stringMatching(/^0x/) });
    expect(await world.chain.balanceOf(payer.address)).toBe(start - DEPOSIT);
    const second = await market.callWithReceipt(echo.slug, { i: 2 }, { beforePayment: (q) => void quotes.push(q) });
    expect(second.receipt).toMatchObject({ amount: `${PRICE}`, transaction: null });
    expect(second.receipt!.deposit).toBeUndefined();
    expect(quotes.map((q) => q.deposit)).toEqual([DEPOSIT, 0n]);
  }, 60_000);

  it('market call prints the deposit on stderr before its paid request, and its receipt names deposit and charge', async () => {
    const echo = await channelSkill();
    const payer = await world.payer();
    let stderr = '';
    const shownFirst: boolean[] = [];
    // The paid request waits (bounded) for the line: printed after the payment, it would never come in time.
    echo.front.paid = async () => {
      const line = await eventually(
        () => stderr,
        (text) => text.includes('Depositing'),
        'the deposit line before the paid request',
        15_000,
      ).catch(() => undefined);
      shownFirst.push(line !== undefined);
    };
    const env = {
      XDG_CONFIG_HOME: join(folder, `cli-${payer.address}`),
      MARKET_API_URL: world.registryUrl,
      MARKET_PRIVATE_KEY: payer.privateKey,
      MARKET_RPC_URL: world.chain.rpcUrl,
    };
    const run = async (i: number) => {
      stderr = '';
      const args = ['call', echo.slug, JSON.stringify({ i }), '--payment', 'channel', '--network', world.chain.network];
      const child = spawnMarket([...args, '--asset', world.chain.token.address], env, folder);
      const decoder = new TextDecoder();
      const drained = (async () => {
        for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
      })();
      const [code, stdout] = await Promise.all([child.exited, new Response(child.stdout).text(), drained]);
      return { code, stdout, lines: stderr.trim().split('\n') };
    };
    const start = await world.chain.balanceOf(payer.address);
    const first = await run(1);
    expect({ code: first.code, lines: first.lines.length }).toEqual({ code: 0, lines: 2 });
    expect(first.lines[0]).toBe(
      `Depositing $0.015 into a payment channel with ${echo.payee} (refundable; each call is charged from it); this call is charged $0.001.`,
    );
    expect(shownFirst).toEqual([true]);
    expect(JSON.parse(first.lines[1]!).receipt).toMatchObject({ amount: `${PRICE}`, deposit: `${DEPOSIT}`, scheme: 'batch-settlement' });
    expect(await world.chain.balanceOf(payer.address)).toBe(start - DEPOSIT);

    // A voucher on the open channel: no deposit, no line, a receipt without one.
    echo.front.paid = async () => undefined;
    const second = await run(2);
    expect({ code: second.code, lines: second.lines.length }).toEqual({ code: 0, lines: 1 });
    const receipt = JSON.parse(second.lines[0]!).receipt;
    expect(receipt).toMatchObject({ amount: `${PRICE}`, transaction: null });
    expect(receipt.deposit).toBeUndefined();
  }, 60_000);

  it('market mcp deposits the same, says the deposit apart from the charge, and wallet_status shows what channels hold', async () => {
    const echo = await channelSkill();
    const agent = await world.payer();
    const start = await world.chain.balanceOf(agent.address);
    const client = await mcp(agent, 1_000_000n);
    try {
      const before = await tool(client, 'wallet_status');
      expect(before.structuredContent.channels).toEqual({ count: 0, deposited: '0', charged: '0', yours: '0' });
      const paid = await tool(client, 'call_skill', { slug: echo.slug, input: { i: 1 } });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.receipt).toMatchObject({ amount: `${PRICE}`, deposit: `${DEPOSIT}` });
      expect(textOf(paid)).toContain('Charged $0.001 on');
      expect(textOf(paid)).toContain('this call first deposited $0.015 into it (refundable; each call is charged from it)');
      expect(await world.chain.balanceOf(agent.address)).toBe(start - DEPOSIT);
      const again = await tool(client, 'call_skill', { slug: echo.slug, input: { i: 2 } });
      expect(again.structuredContent.receipt.deposit).toBeUndefined();
      expect(textOf(again)).toContain('a signed voucher, no transaction');
      const status = await tool(client, 'wallet_status');
      expect(status.structuredContent.channels).toEqual({
        count: 1,
        deposited: `${DEPOSIT}`,
        charged: `${2n * PRICE}`,
        yours: `${DEPOSIT - 2n * PRICE}`,
      });
      expect(textOf(status)).toContain('In 1 payment channel: $0.015 deposited, $0.002 charged, $0.013 yours');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('market mcp deposits no more than what the period’s budget leaves', async () => {
    const [a, b] = [await channelSkill(), await channelSkill()];
    const agent = await world.payer();
    const client = await mcp(agent, 10n * PRICE);
    try {
      const start = await world.chain.balanceOf(agent.address);
      // The whole $0.01 budget is left: the deposit stops there, below the policy's $0.015.
      expect((await tool(client, 'call_skill', { slug: a.slug, input: {} })).structuredContent.receipt).toMatchObject({
        deposit: `${10n * PRICE}`,
      });
      // $0.001 spent: a channel to another server gets what is left, $0.009.
      expect((await tool(client, 'call_skill', { slug: b.slug, input: {} })).structuredContent.receipt).toMatchObject({
        deposit: `${9n * PRICE}`,
      });
      expect(await world.chain.balanceOf(agent.address)).toBe(start - 19n * PRICE);
    } finally {
      await client.close();
    }
  }, 60_000);
});
