/**
 * Our whole channel stack on anvil: our client (SkillMarket, payment `channel`) pays our skill
 * server, whose receiver authorizer is our facilitator's (its `/supported`); the deposit goes
 * through our facilitator, the calls are vouchers checked by the server alone, and the server's
 * claim and settle through our facilitator pay the receiver every answered call, with one
 * transaction each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAbiItem, type Hex, slice, toFunctionSelector } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../src/chain/batch-settlement';
import { receiverState } from '../support/chain';
import { loopbackServeOptions } from '../support/skill-server';
import { useWorld } from '../client/support/world';

const world = useWorld({ chain: true });
const PRICE = 1_000n; // $0.001
const CALLS = 25;
let folder: string;
const servers: SkillServer[] = [];

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'channel-ours-'));
});
afterAll(async () => {
  for (const server of servers) await server.stop();
  await rm(folder, { recursive: true, force: true });
});

const selector = (name: 'deposit' | 'claimWithSignature' | 'settle') => toFunctionSelector(getAbiItem({ abi: batchSettlementAbi, name }));

/** The selectors of the transactions mined after block `from`. */
async function transactionsSince(from: bigint): Promise<Hex[]> {
  const to = await world.chain.publicClient.getBlockNumber();
  const selectors: Hex[] = [];
  for (let n = from + 1n; n <= to; n++) {
    const block = await world.chain.publicClient.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) selectors.push(slice(tx.input, 0, 4));
  }
  return selectors;
}

/** Our skill server selling `tick` over channels (claims only when asked) to a fresh payee, listed in the registry. */
async function channelSkill(channels: Record<string, unknown>) {
  const payee = await world.payee();
  const name = `tick-${crypto.randomUUID().slice(0, 8)}`;
  let runs = 0;
  const server = await serve(
    { [name]: skill({ price: '$0.001' }, (input: { i: number }) => ({ i: input.i, run: ++runs })) },
    loopbackServeOptions(world.chain, world.facilitatorUrl, payee, {
      asset: world.asset,
      channels: { store: join(folder, name), claimAbove: '$100', claimWithinMs: 600_000, ...channels },
    }),
  );
  servers.push(server);
  const res = await world.creator.register({
    name,
    endpoint: server.url,
    price: '$0.001',
    paymentAddress: payee,
    network: world.chain.network,
    groups: [world.group],
  });
  expect(res.status).toBe(201);
  return { server, payee, slug: ((await res.json()) as { slug: string }).slug };
}

describe('our client, our skill server and our facilitator over one payment channel', () => {
  it('takes one deposit, answers every call on a voucher alone, and one claim and one settle pay the receiver all of them', async () => {
    const supported = (await (await fetch(`${world.facilitatorUrl}/supported`)).json()) as {
      kinds: { scheme: string; extra?: { receiverAuthorizer?: string } }[];
    };
    const authorizer = supported.kinds.find((k) => k.scheme === 'batch-settlement')?.extra?.receiverAuthorizer;
    expect(authorizer).toMatch(/^0x[0-9a-fA-F]{40}$/);

    const { slug, payee } = await channelSkill({ minDeposit: '$0.05' });

    const payer = await world.payer(1_000_000n);
    const market = world.market({ wallet: payer, payment: 'channel', maxDeposit: '$0.1', rpcUrl: world.chain.rpcUrl });
    const from = await world.chain.publicClient.getBlockNumber();
    for (let i = 1; i <= CALLS; i++) expect(await market.call(slug, { i })).toEqual({ i, run: i });
    expect(await transactionsSince(from)).toEqual([selector('deposit')]);
    const [channel] = await market.channels();
    expect(channel).toMatchObject({ receiver: payee, deposit: '50000', charged: `${BigInt(CALLS) * PRICE}` });

    const before = await world.chain.publicClient.getBlockNumber();
    expect(await servers[0]!.claimChannels(true)).toMatchObject({ channels: 1 });
    expect(await transactionsSince(before)).toEqual([selector('claimWithSignature'), selector('settle')]);
    expect(await receiverState(world.chain, payee)).toEqual({ totalClaimed: BigInt(CALLS) * PRICE, totalSettled: BigInt(CALLS) * PRICE });
    expect(await world.chain.balanceOf(payee)).toBe(BigInt(CALLS) * PRICE);
  }, 120_000);

  it('doubles a busy channel’s deposits: 35 calls take deposits of 10, 10 and 20 calls', async () => {
    const { slug } = await channelSkill({});
    const payer = await world.payer(1_000_000n);
    const market = world.market({ wallet: payer, payment: 'channel', maxDeposit: '$1' });
    const from = await world.chain.publicClient.getBlockNumber();
    for (let i = 1; i <= 35; i++) await market.call(slug, { i });
    const deposits = await world.chain.publicClient.getContractEvents({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      eventName: 'Deposited',
      fromBlock: from + 1n,
    });
    expect(deposits.map((d) => d.args.amount)).toEqual([10n * PRICE, 10n * PRICE, 20n * PRICE]);
  }, 120_000);
});
