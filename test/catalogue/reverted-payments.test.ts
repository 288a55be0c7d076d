/**
 * A paid call answered in `broadcast` settlement whose transfer then reverts (the payer drains their
 * balance between the answer and the block), end to end on anvil and the embedded database: the skill
 * server (broadcast, tracking its calls), our facilitator, the registry served over HTTP and its
 * on-chain verifier. The payment ends `rejected` with the revert as its reason, counts as neither
 * revenue nor a paid call, and stays visible: in the consumer's usage history and to the creator
 * (`rejectedPaymentCount`, `GET /analytics/:skillId/payments?state=rejected`); nobody else reads
 * the creator's list.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import type { Address, Hex } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { PAYMENT_REVERTED_REASON, RegistryClient, RegistryError } from 'skill-market/registry';
import { decodeSettleResponse } from 'skill-market/x402';
import { createKey, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { type LocalChain, startChain } from '../support/chain';
import { oneDatabase } from '../support/database';
import { drainFirst, eventually } from '../support/eventually';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { registryFixture, chainVerifier } from '../support/registry';
import { paidPost, recordingLogger } from '../support/skill-server';

const PRICE = 10_000n; // $0.01

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
}, 60_000);
afterAll(() => chain.stop());
afterEach(() => chain.testClient.setAutomine(true));

const transactionOf = (res: Response) => decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!).transaction as Hex;

for (const kind of oneDatabase) {
  describe(`a reverted broadcast payment on ${kind}`, () => {
    const fx = registryFixture(kind);
    let f: FacilitatorFixture;
    let registryServer: ReturnType<typeof Bun.serve>;
    let apiUrl: string;
    let creator: Creator;
    let consumer: RegistryClient;
    let server: SkillServer;
    let skillId: string;
    let payee: Address;
    const runs = { work: 0 };

    beforeAll(async () => {
      registryServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => fx.registry.app.handle(request) });
      apiUrl = `http://127.0.0.1:${registryServer.port}`;
      f = await startFacilitatorFixture(chain, kind);
      f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
      const payeeAccount = await chain.createAccount();
      payee = payeeAccount.address;
      creator = await newCreator(fx.request);
      await creator.prove(payeeAccount);
      const listed = await creator.register({ name: 'work', price: '$0.01', paymentAddress: payee, network: chain.network });
      expect(listed.status).toBe(201);
      skillId = (await json(listed)).id;
      const session = await walletSignIn(fx.request);
      consumer = new RegistryClient({ apiUrl, apiKey: (await createKey(fx.request, session.token, 'consumer')).key });
      server = await serve(
        {
          work: skill({ price: '$0.01' }, async (input: { n?: number }) => {
            runs.work++;
            return { doubled: (input.n ?? 0) * 2 };
          }),
        },
        {
          port: 0,
          hostname: '127.0.0.1',
          wallet: payee,
          facilitatorUrl: `http://127.0.0.1:${f.facilitator.app.server!.port}`,
          network: chain.network,
          asset: { address: chain.token.address, name: chain.token.name, version: chain.token.version, decimals: chain.token.decimals },
          settlement: 'broadcast',
          apiKey: creator.key,
          apiUrl,
          logger: recordingLogger(),
          env: {},
        },
      );
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
      await f?.facilitator.app.stop();
      await f?.close();
      registryServer?.stop(true);
    });

    const verifier = () => chainVerifier(fx, chain);

    it('ends rejected as reverted, counts nothing, and stays visible to the consumer and the creator', async () => {
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      // A good paid call first: verified, it counts.
      const good = await paidPost(`${server.url}/work`, { n: 1 }, payer);
      expect(good.status).toBe(200);
      const goodTx = transactionOf(good);
      await eventually(
        () => chain.publicClient.getTransactionReceipt({ hash: goodTx }).catch(() => undefined),
        (r) => r?.status === 'success',
        'the good transfer mined',
      );
      expect((await consumer.recordUsage({ skillId, amount: PRICE.toString(), paymentRef: goodTx })).recorded).toBe(true);
      fx.clock.advance(60); // the second call a minute later: newest-first lists have one order

      // Answered at broadcast, then the payer drains their balance ahead of the settlement in the same block.
      await chain.testClient.setAutomine(false);
      const answered = await paidPost(`${server.url}/work`, { n: 2 }, payer);
      expect(answered.status).toBe(200);
      expect(await answered.json()).toMatchObject({ success: true, result: { doubled: 4 } });
      const revertedTx = transactionOf(answered);
      await drainFirst(chain, payer, chain.accounts.payees[0]!.address, PRICE);
      expect((await chain.publicClient.getTransactionReceipt({ hash: revertedTx })).status).toBe('reverted');
      expect(await chain.balanceOf(payer.address)).toBe(0n); // PRICE paid once, PRICE drained, nothing for the reverted call
      expect((await consumer.recordUsage({ skillId, amount: PRICE.toString(), paymentRef: revertedTx })).recorded).toBe(true);

      // The skill server reports its calls too (the same payments: each counts at most once).
      expect(await server.flushCalls()).toBe(true);
      await fx.settled();
      expect(await verifier().verifyNow()).toMatchObject({ checked: 2, verified: 1, rejected: 1, retried: 0 });

      const stats = await json(await fx.request(`/analytics/${skillId}`));
      expect(stats).toMatchObject({ paidCallCount: 1, callCount: 1, totalRevenueAtomic: PRICE.toString(), rejectedPaymentCount: 1 });
      expect(stats.daily.at(-1)).toMatchObject({ calls: 1, revenueAtomic: PRICE.toString() });
      expect(await new RegistryClient({ apiUrl }).analytics(skillId)).toMatchObject({ paidCallCount: 1, rejectedPaymentCount: 1 });

      // The consumer's history keeps the call, saying the payment reverted.
      const usage = (await consumer.usage()).items;
      expect(usage.map((u) => [u.paymentRef, u.verification, u.verificationReason])).toEqual([
        [revertedTx, 'rejected', PAYMENT_REVERTED_REASON],
        [goodTx, 'verified', null],
      ]);

      // The creator lists it with the transaction, amount, reason and times.
      const owner = new RegistryClient({ apiUrl, apiKey: creator.key });
      const rejected = await owner.skillPayments(skillId, { state: 'rejected' });
      expect(rejected.items).toEqual([
        {
          id: expect.any(String),
          txHash: revertedTx.toLowerCase(),
          network: chain.network,
          amount: '0.01',
          amountAtomic: PRICE.toString(),
          state: 'rejected',
          reason: PAYMENT_REVERTED_REASON,
          payer: null,
          reportedAt: expect.any(String),
          decidedAt: expect.any(String),
          // No receipt came with it; nothing moved on chain.
          receiptCheck: null,
          receiptAmountAtomic: null,
          paidAtomic: null,
        },
      ]);
      expect(rejected.nextCursor).toBeUndefined();
      const all = await owner.skillPayments(skillId);
      expect(all.items.map((p) => [p.txHash, p.state])).toEqual([
        [revertedTx.toLowerCase(), 'rejected'],
        [goodTx.toLowerCase(), 'verified'],
      ]);
      expect(all.items[1]).toMatchObject({ payer: payer.address, reason: null });
      // Paged: one at a time, no repeats.
      const first = await owner.skillPayments(skillId, { limit: 1 });
      expect(first.items.map((p) => p.state)).toEqual(['rejected']);
      const second = await owner.skillPayments(skillId, { limit: 1, cursor: first.nextCursor! });
      expect(second.items.map((p) => p.state)).toEqual(['verified']);
      expect(second.nextCursor).toBeUndefined();
      expect(runs.work).toBe(2);
    }, 60_000);

    it("refuses the creator's payment list to anyone else and bad queries with 4xx", async () => {
      const status = (p: Promise<unknown>) =>
        p.then(
          () => 200,
          (e: unknown) => (e instanceof RegistryError ? e.status : 0),
        );
      expect(await status(consumer.skillPayments(skillId))).toBe(403);
      expect((await fx.request(`/analytics/${skillId}/payments`)).status).toBe(401);
      const other = await newCreator(fx.request);
      expect(await status(new RegistryClient({ apiUrl, apiKey: other.key }).skillPayments(skillId))).toBe(403);
      const ask = (query: string) =>
        fx.request(`/analytics/${skillId}/payments${query}`, { headers: { authorization: `Bearer ${creator.key}` } });
      expect((await ask('?state=reverted')).status).toBe(400);
      expect((await ask('?limit=0')).status).toBe(400);
      const forged = await ask('?cursor=bm90LWEtY3Vyc29y');
      expect(forged.status).toBe(400);
      expect(await forged.json()).toMatchObject({ code: 'VALIDATION', error: expect.stringContaining('cursor') });
      expect(
        (await fx.request(`/analytics/${crypto.randomUUID()}/payments`, { headers: { authorization: `Bearer ${creator.key}` } })).status,
      ).toBe(404);
    });
  });
}
