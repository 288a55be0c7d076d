/**
 * Our facilitator speaks `batch-settlement` with the x402 reference stack: @x402/hono with
 * @x402/evm's server scheme (delegating its receiver authorizer to us, as /supported advertises)
 * and @x402/fetch with @x402/evm's client scheme, on our contract on anvil. Deposit, vouchers, the
 * server's claim (signed by our authorizer for the key each server sends, two servers' claims in
 * one transaction) and settle, and a cooperative refund all end up on chain. The steps share
 * channels, so they run in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { getAbiItem, slice, toFunctionSelector, type Hex } from 'viem';
import { BATCH_SETTLEMENT_ADDRESS, batchSettlementAbi } from '../../../src/chain/batch-settlement';
import { deriveAuthorizerKey } from '../../../src/config';
import { channelOperations } from '../../../src/db/schema';
import { type LocalChain, receiverState, settlementEvents, startChain, type TestAccount } from '../../support/chain';
import { databaseKinds } from '../../support/database';
import { privateKeyToAccount } from 'viem/accounts';
import { PRICE, referenceClient, referenceServer, servedFacilitator, type ServedFacilitator } from './support';

const DEPOSIT = 10n * PRICE;

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 2, payees: 2 });
}, 60_000);
afterAll(() => chain.stop());

const selector = (name: 'deposit' | 'claimWithSignature' | 'multicall' | 'settle') =>
  toFunctionSelector(getAbiItem({ abi: batchSettlementAbi, name }));
const selectorOf = async (hash: string) => slice((await chain.publicClient.getTransaction({ hash: hash as Hex })).input, 0, 4);
const receipt = (hash: string) => chain.publicClient.getTransactionReceipt({ hash: hash as Hex });

for (const kind of databaseKinds) {
  describe(`the reference batch-settlement server and client through our facilitator (${kind} database)`, () => {
    let facilitator: ServedFacilitator;
    let servers: ReturnType<typeof referenceServer>[];
    let payers: TestAccount[];
    let clients: ReturnType<typeof referenceClient>[];
    let payees: TestAccount[];

    beforeAll(async () => {
      payees = await Promise.all([chain.createAccount(), chain.createAccount()]);
      // Each server's key bound to its receiver, sent through the facilitator client's auth headers: its
      // consent to the claims and refunds our authorizer signs (closed, as `market facilitator` in production).
      const keys = payees.map((p) => ({ receiver: p.address, key: `reference-server-key-${p.address}` }));
      facilitator = await servedFacilitator(chain, kind, { config: { receiverKeys: keys, open: false } });
      payers = await Promise.all([chain.createAccount({ usdc: 1_000_000n }), chain.createAccount({ usdc: 1_000_000n })]);
      servers = payees.map((p, i) => referenceServer(chain, facilitator.keyed(keys[i]!.key), p.address));
      clients = payers.map((p) => referenceClient(chain, p));
    }, 60_000);
    afterAll(async () => {
      for (const s of servers) s.stop();
      await facilitator.close();
    });

    it('lists batch-settlement on its network in /supported with its receiver authorizer', async () => {
      const supported = (await (await facilitator.fixture.get('/supported')).json()) as { kinds: unknown[]; signers: unknown };
      const authorizer = privateKeyToAccount(deriveAuthorizerKey(chain.accounts.relayer.privateKey)).address;
      expect(supported.kinds).toContainEqual({
        x402Version: 2,
        scheme: 'batch-settlement',
        network: chain.network,
        extra: { receiverAuthorizer: authorizer },
      });
      expect(supported.signers).toEqual({ 'eip155:*': [chain.accounts.relayer.address] });
    });

    it('settles the first paid request as a deposit sponsored by our relayer, then answers vouchers with no transaction', async () => {
      const [client] = clients as [ReturnType<typeof referenceClient>];
      const first = await client.get(servers[0]!.url);
      expect(first.status).toBe(200);
      expect(first.receipt).toMatchObject({ success: true, amount: `${DEPOSIT}` });
      const deposit = await chain.publicClient.getTransaction({ hash: first.receipt!.transaction as Hex });
      expect(deposit.from.toLowerCase()).toBe(chain.accounts.relayer.address.toLowerCase());
      expect(await selectorOf(first.receipt!.transaction)).toBe(selector('deposit'));

      const block = await chain.publicClient.getBlockNumber();
      for (let i = 2; i <= 5; i++) {
        const paid = await client.get(servers[0]!.url);
        expect(paid).toMatchObject({ status: 200, receipt: { success: true, transaction: '' } });
      }
      expect(await chain.publicClient.getBlockNumber()).toBe(block);
      // The other payer pays the other server three times.
      for (let i = 1; i <= 3; i++) expect((await clients[1]!.get(servers[1]!.url)).status).toBe(200);
      expect(servers.map((s) => s.state.handled)).toEqual([5, 3]);
    });

    it('claims both servers’ vouchers in one claimWithSignature our authorizer signs, and settle sweeps each receiver: balance = calls × price', async () => {
      const [a, b] = await Promise.all(servers.map((s) => s.manager.claim()));
      expect(a).toHaveLength(1);
      expect(b).toHaveLength(1);
      expect(a![0]!.transaction).toBe(b![0]!.transaction); // one transaction for both servers
      expect(await selectorOf(a![0]!.transaction)).toBe(selector('claimWithSignature'));
      expect(settlementEvents(await receipt(a![0]!.transaction)).map(([name, args]) => [name, args.amount])).toEqual(
        expect.arrayContaining([
          ['Claimed', 5n * PRICE],
          ['Claimed', 3n * PRICE],
        ]),
      );
      expect(await receiverState(chain, payees[0]!.address)).toEqual({ totalClaimed: 5n * PRICE, totalSettled: 0n });

      for (const [i, server] of servers.entries()) {
        const { transaction } = await server.manager.settle();
        expect(await selectorOf(transaction)).toBe(selector('settle'));
        expect(await chain.balanceOf(payees[i]!.address)).toBe(BigInt([5, 3][i]!) * PRICE);
      }
      // Recorded before sent, each once: 2 deposits, 1 claim, 2 settles, all confirmed.
      const rows = await facilitator.fixture.database.db.select().from(channelOperations);
      expect(rows.map((r) => [r.kind, r.state]).sort()).toEqual([
        ['claim', 'confirmed'],
        ['deposit', 'confirmed'],
        ['deposit', 'confirmed'],
        ['settle', 'confirmed'],
        ['settle', 'confirmed'],
      ]);
    });

    it('refunds cooperatively: a partial refund claims what is outstanding in the same multicall, then the rest goes back', async () => {
      const [client] = clients as [ReturnType<typeof referenceClient>];
      const server = servers[0]!;
      await client.get(server.url);
      await client.get(server.url); // 7 charged, 5 claimed
      const payer = payers[0]!.address;
      const before = await chain.balanceOf(payer);

      const partial = await client.scheme.refund(server.url, { amount: `${PRICE}` });
      expect(partial).toMatchObject({ success: true, amount: `${PRICE}` });
      expect(await selectorOf(partial.transaction)).toBe(selector('multicall'));
      expect(await chain.balanceOf(payer)).toBe(before + PRICE);

      const full = await client.scheme.refund(server.url);
      const rest = DEPOSIT - PRICE - 7n * PRICE;
      expect(full).toMatchObject({ success: true, amount: `${rest}` });
      expect(await chain.balanceOf(payer)).toBe(before + PRICE + rest);
      const channelId = (await chain.publicClient.getTransactionReceipt({ hash: full.transaction as Hex })).logs.find(
        (l) => l.address.toLowerCase() === BATCH_SETTLEMENT_ADDRESS.toLowerCase(),
      )?.topics[1] as Hex;
      const [balance, claimed] = await chain.publicClient.readContract({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName: 'channels',
        args: [channelId],
      });
      expect([balance, claimed]).toEqual([7n * PRICE, 7n * PRICE]);
    });
  });
}
