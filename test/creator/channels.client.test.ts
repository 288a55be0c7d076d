/**
 * Our client (SkillMarket, payment `channel`) pays our skill server over one payment channel whose
 * receiver authorizer is the facilitator's (@x402/evm's facilitator, its `/supported`): the calls
 * of a deposit cost one deposit, one claim and one settle on chain; and a payer's timed withdrawal never
 * beats the server's claim of what it answered (anvil time travel). The client signs the next
 * call's voucher while a call is in flight (a key held in this process) and sends it only when it is
 * exactly the voucher that call would sign: a smaller charge or a corrective 402 makes it sign
 * afresh, and the budget and the channel's balance bound what is signed ahead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, getAbiItem, type Hex, slice, toFunctionSelector } from 'viem';
import { type ServeOptions, serve, skill, type SkillServer } from 'skill-market/creator';
import type { ChannelConfig } from 'skill-market/x402';
import { batchSettlementAbi } from '../../src/chain/batch-settlement';
import { receiverState, settlementTx } from '../support/chain';
import { startBatchFacilitator } from '../support/chain/batch-facilitator';
import { eventually } from '../support/eventually';
import { loopbackServeOptions } from '../support/skill-server';
import { countingAccount, useWorld } from '../client/support/world';

const world = useWorld({ chain: true });
const PRICE = 1_000n; // $0.001
let facilitator: ReturnType<typeof startBatchFacilitator>;
let folder: string;
const servers: SkillServer[] = [];

beforeAll(async () => {
  facilitator = startBatchFacilitator(world.chain, await world.chain.createAccount(), await world.chain.createAccount());
  folder = await mkdtemp(join(tmpdir(), 'channel-client-'));
}, 60_000);

afterAll(async () => {
  for (const server of servers) await server.stop();
  facilitator?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** Our skill server selling `tick` over channels to a fresh payee ($0.001; half of it when the input says `half`), listed in the registry. */
async function channelSkill(channels: Record<string, unknown>, extra: Partial<ServeOptions> = {}) {
  const payee = await world.payee();
  const name = `tick-${crypto.randomUUID().slice(0, 8)}`;
  const state = { runs: 0, payee, store: join(folder, name), server: undefined as unknown as SkillServer, slug: '' };
  state.server = await serve(
    {
      [name]: skill({ price: '$0.001' }, (input: { i: number; half?: boolean }, context) => {
        state.runs++;
        if (input.half) context.charge(PRICE / 2n);
        return { i: input.i };
      }),
    },
    loopbackServeOptions(world.chain, facilitator.url, payee, {
      asset: world.asset,
      channels: { store: state.store, ...channels },
      ...extra,
    }),
  );
  servers.push(state.server);
  const res = await world.creator.register({
    name,
    endpoint: state.server.url,
    price: '$0.001',
    paymentAddress: payee,
    network: world.chain.network,
    groups: [world.group],
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  state.slug = ((await res.json()) as { slug: string }).slug;
  return state;
}

/** The selectors of the transactions mined in blocks after `from`. */
async function transactionsSince(from: bigint): Promise<Hex[]> {
  const to = await world.chain.publicClient.getBlockNumber();
  const selectors: Hex[] = [];
  for (let n = from + 1n; n <= to; n++) {
    const block = await world.chain.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) selectors.push(slice(tx.input, 0, 4));
  }
  return selectors;
}
const selector = (name: 'deposit' | 'claimWithSignature' | 'settle') => toFunctionSelector(getAbiItem({ abi: batchSettlementAbi, name }));

/** A fetch that records the status of every answer from `origin`. */
function watching(origin: string) {
  const statuses: number[] = [];
  const fetchImpl = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const res = await fetch(input, init);
    if (String(input instanceof Request ? input.url : input).startsWith(origin)) statuses.push(res.status);
    return res;
  }) as typeof fetch;
  return { statuses, fetch: fetchImpl };
}

/** What the server claims on chain for everything it answered. */
async function claimedByServer(server: SkillServer, payee: string): Promise<bigint> {
  await server.claimChannels();
  return eventually(
    () => world.chain.balanceOf(payee as `0x${string}`),
    (balance) => balance > 0n,
    'the server claims and settles what it answered',
    30_000,
  );
}

// Before the withdrawal test below, whose time travel would expire the deposits signed here.
describe('vouchers signed ahead', () => {
  it('signs the next call’s voucher while a call is in flight, and the next call sends it: one request per call', async () => {
    const tick = await channelSkill({ minDeposit: '$0.01' });
    const wallet = countingAccount(await world.payer(1_000_000n));
    const seen = watching(tick.server.url);
    const market = world.market({ wallet, mode: 'fast', payment: 'channel', maxDeposit: '$0.01', fetch: seen.fetch });

    expect(await market.call(tick.slug, { i: 1 })).toEqual({ i: 1 }); // the deposit and its voucher
    expect(wallet.signatures).toBe(2);
    for (let i = 2; i <= 5; i++) {
      expect(await market.call(tick.slug, { i })).toEqual({ i });
      // This call's voucher (signed ahead by the call before, from the third on) and the next one's.
      expect(wallet.signatures).toBe(i + 2);
    }
    expect(seen.statuses).toEqual([402, 200, 200, 200, 200, 200]); // the first call learns the channel terms from a 402
    expect(await claimedByServer(tick.server, tick.payee)).toBe(5n * PRICE);
  }, 60_000);

  it('signs afresh when the server charged less than the price: the voucher signed ahead is never sent', async () => {
    const tick = await channelSkill({ minDeposit: '$0.01' });
    const wallet = countingAccount(await world.payer(1_000_000n));
    const seen = watching(tick.server.url);
    const market = world.market({ wallet, mode: 'fast', payment: 'channel', maxDeposit: '$0.01', fetch: seen.fetch, budget: '$1' });

    await market.call(tick.slug, { i: 1 });
    await market.call(tick.slug, { i: 2 });
    // Signed ahead for 3 × price; the server charges half of it: the receipt and the budget say so.
    const { receipt } = await market.callWithReceipt(tick.slug, { i: 3, half: true });
    expect(receipt).toMatchObject({ amount: `${PRICE / 2n}`, price: '$0.001', chargedCumulativeAmount: `${2n * PRICE + PRICE / 2n}` });
    expect(market.spending).toMatchObject({ spent: 2n * PRICE + PRICE / 2n, reserved: 0n });
    // 2.5 × price so far: this voucher is for 3.5 × price, not the 3 × price signed ahead (a 402 would show it).
    await market.call(tick.slug, { i: 4 });
    await market.call(tick.slug, { i: 5 });
    expect(seen.statuses).toEqual([402, 200, 200, 200, 200, 200]); // the first call learns the channel terms from a 402
    const [channel] = await market.channels();
    expect(channel!.charged).toBe(String(4n * PRICE + PRICE / 2n));
    expect(await claimedByServer(tick.server, tick.payee)).toBe(4n * PRICE + PRICE / 2n);
  }, 60_000);

  it('drops the voucher signed ahead after a corrective 402 and signs the server’s charge plus the price', async () => {
    const tick = await channelSkill({ minDeposit: '$0.01' });
    const payer = await world.payer(1_000_000n);
    const first = watching(tick.server.url);
    const a = world.market({
      wallet: payer,
      mode: 'fast',
      payment: 'channel',
      maxDeposit: '$0.01',
      fetch: first.fetch,
      rpcUrl: world.chain.rpcUrl,
    });
    await a.call(tick.slug, { i: 1 });
    await a.call(tick.slug, { i: 2 }); // a holds a voucher for 3 × price, signed ahead
    // Another client of the same wallet, with its own record: it learns the charge from the server's corrective 402.
    const b = world.market({ wallet: payer, payment: 'channel', maxDeposit: '$0.01', rpcUrl: world.chain.rpcUrl });
    await b.call(tick.slug, { i: 3 });

    // a's record says 2 × price: its 3 × price voucher is refused with the server's 3 × price; a signs 4 × price.
    expect(await a.call(tick.slug, { i: 4 })).toEqual({ i: 4 });
    expect(await a.call(tick.slug, { i: 5 })).toEqual({ i: 5 });
    expect(first.statuses).toEqual([402, 200, 200, 402, 200, 200]);
    const [channel] = await a.channels();
    expect(channel!.charged).toBe(String(5n * PRICE));
    expect(await claimedByServer(tick.server, tick.payee)).toBe(5n * PRICE);
  }, 60_000);

  it('signs nothing ahead that the budget would not let a call pay', async () => {
    const tick = await channelSkill({ minDeposit: '$0.01' });
    const wallet = countingAccount(await world.payer(1_000_000n));
    const market = world.market({ wallet, payment: 'channel', maxDeposit: '$0.01', budget: '$0.003' });
    for (let i = 1; i <= 3; i++) await market.call(tick.slug, { i });
    // The deposit and three vouchers (the third signed ahead during the second call); none for a fourth call.
    expect(wallet.signatures).toBe(4);
    await expect(market.call(tick.slug, { i: 4 })).rejects.toMatchObject({ limit: 'budget' });
    expect(wallet.signatures).toBe(4);
  }, 60_000);
});

describe('our client paying our skill server over a channel', () => {
  it('makes every call of a deposit over it, then one claim and one settle pay the receiver all of them', async () => {
    // Twenty calls use up the deposit (long channels, their speed and cost per call: bench/channels.ts). Claims only when told.
    const CALLS = 20;
    const tick = await channelSkill({ minDeposit: '$0.02', claimAbove: '$100' });
    const payer = await world.payer(40_000n);
    const market = world.market({ wallet: payer, payment: 'channel', maxDeposit: '$0.02', rpcUrl: world.chain.rpcUrl });
    const from = await world.chain.publicClient.getBlockNumber();
    for (let i = 1; i <= CALLS; i++) expect(await market.call(tick.slug, { i })).toEqual({ i });
    expect(tick.runs).toBe(CALLS);
    expect(await transactionsSince(from)).toEqual([selector('deposit')]);

    const after = await world.chain.publicClient.getBlockNumber();
    expect(await tick.server.claimChannels()).toMatchObject({ channels: 1 });
    expect(await transactionsSince(after)).toEqual([selector('claimWithSignature'), selector('settle')]);
    const all = BigInt(CALLS) * PRICE;
    expect(await receiverState(world.chain, tick.payee)).toMatchObject({ totalClaimed: all, totalSettled: all });
    expect(await world.chain.balanceOf(tick.payee)).toBe(all);
    expect(await world.chain.balanceOf(payer.address)).toBe(40_000n - all);
  }, 120_000);

  it('claims what it answered as soon as the payer starts a timed withdrawal, before the delay ends', async () => {
    // No claim by amount or age: only the withdrawal, read on chain, makes the server claim.
    const tick = await channelSkill(
      { withdrawDelay: 900, claimAbove: '$100', claimWithinMs: 600_000, settleWithinMs: 0, claimIntervalMs: 100 },
      { rpcUrl: world.chain.rpcUrl },
    );
    const payer = await world.payer(1_000_000n);
    const market = world.market({ wallet: payer, payment: 'channel', maxDeposit: '$0.01' });
    for (let i = 1; i <= 4; i++) await market.call(tick.slug, { i });
    const [channel] = await market.channels();
    const config: ChannelConfig = channel!.config;
    expect(await receiverState(world.chain, tick.payee)).toMatchObject({ totalClaimed: 0n });

    await settlementTx(world.chain, payer, 'initiateWithdraw', [config, 10n * PRICE - 4n * PRICE]);
    await eventually(
      () => receiverState(world.chain, tick.payee),
      (r) => r.totalClaimed === 4n * PRICE,
      'the server claims the four answered calls',
      30_000,
    );
    await world.chain.testClient.increaseTime({ seconds: 900 });
    await world.chain.testClient.mine({ blocks: 1 });
    const before = await world.chain.balanceOf(payer.address);
    await settlementTx(world.chain, payer, 'finalizeWithdraw', [config]);
    expect(await world.chain.balanceOf(payer.address)).toBe(before + 6n * PRICE);
    // The settle the server sends after its claim may still be on its way.
    await eventually(
      () => receiverState(world.chain, tick.payee),
      (r) => r.totalClaimed === 4n * PRICE && r.totalSettled === 4n * PRICE,
      'the server settles the claimed calls',
      30_000,
    );
    expect(await world.chain.balanceOf(tick.payee as Address)).toBe(4n * PRICE);
  }, 60_000);
});
