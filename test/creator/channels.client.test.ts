/**
 * Our client (SkillMarket, payment `channel`) pays our skill server over one payment channel whose
 * receiver authorizer is the facilitator's (@x402/evm's facilitator, its `/supported`): a thousand
 * calls cost one deposit, one claim and one settle on chain; and a payer's timed withdrawal never
 * beats the server's claim of what it answered (anvil time travel).
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
import { useWorld } from '../client/support/world';

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

/** Our skill server selling `tick` over channels to a fresh payee, listed in the registry. */
async function channelSkill(channels: Record<string, unknown>, extra: Partial<ServeOptions> = {}) {
  const payee = (await world.chain.createAccount()).address;
  const name = `tick-${crypto.randomUUID().slice(0, 8)}`;
  const state = { runs: 0, payee, store: join(folder, name), server: undefined as unknown as SkillServer, slug: '' };
  state.server = await serve(
    {
      [name]: skill({ price: '$0.001' }, (input: { i: number }) => {
        state.runs++;
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

describe('our client paying our skill server over a channel', () => {
  it('makes a thousand calls with one deposit, then one claim and one settle pay the receiver all of them', async () => {
    const tick = await channelSkill({ minDeposit: '$1' });
    const payer = await world.payer(2_000_000n);
    const market = world.market({ wallet: payer, payment: 'channel', maxDeposit: '$1', rpcUrl: world.chain.rpcUrl });
    const from = await world.chain.publicClient.getBlockNumber();
    for (let i = 1; i <= 1000; i++) expect(await market.call(tick.slug, { i })).toEqual({ i });
    expect(tick.runs).toBe(1000);
    expect(await transactionsSince(from)).toEqual([selector('deposit')]);

    const after = await world.chain.publicClient.getBlockNumber();
    expect(await tick.server.claimChannels()).toMatchObject({ channels: 1 });
    expect(await transactionsSince(after)).toEqual([selector('claimWithSignature'), selector('settle')]);
    expect(await receiverState(world.chain, tick.payee)).toMatchObject({ totalClaimed: 1000n * PRICE, totalSettled: 1000n * PRICE });
    expect(await world.chain.balanceOf(tick.payee)).toBe(1000n * PRICE);
    expect(await world.chain.balanceOf(payer.address)).toBe(2_000_000n - 1_000_000n);
  }, 120_000);

  it('claims what it answered as soon as the payer starts a timed withdrawal, before the delay ends', async () => {
    // No claim by amount or age: only the withdrawal, read on chain, makes the server claim.
    const tick = await channelSkill(
      { withdrawDelay: 900, claimAbove: '$100', claimWithinMs: 600_000, claimIntervalMs: 100 },
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
