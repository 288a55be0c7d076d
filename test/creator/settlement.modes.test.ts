/**
 * The skill server's settlement modes against our facilitator on each database: one proof, one
 * run and one transfer in both modes; `broadcast` answers before the block and carries the
 * transaction hash; the creator's cap of unconfirmed value makes a call wait for its receipt; a
 * payer's concurrent calls get no more results than their balance pays for; a payer who drains
 * their balance after a broadcast answer is refused afterwards; a stopped server asks the
 * facilitator nothing more.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import type { Address, Hex } from 'viem';
import { serve, skill, type ServeOptions, type SkillServer } from 'skill-market/creator';
import { decodeSettleResponse } from 'skill-market/x402';
import { type LocalChain, startChain } from '../support/chain';
import { drainFirst, eventually } from '../support/eventually';
import { databaseKinds } from '../support/database';
import { minedStatuses, transfersFrom } from '../support/exposure';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import {
  balances,
  localServeOptions,
  paidPost,
  postJson,
  proofFor,
  recordingLogger,
  recordingFetch,
  type SentRequest,
} from '../support/skill-server';

const PRICE = 10_000n; // $0.01
let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
}, 60_000);
afterAll(() => chain.stop());
afterEach(() => chain.testClient.setAutomine(true));

const runs = { work: 0 };
const skills = {
  work: skill({ price: '$0.01' }, async (input: { n?: number }) => {
    runs.work++;
    await Bun.sleep(50); // every concurrent copy arrives while it runs
    return { doubled: (input.n ?? 0) * 2 };
  }),
};

const receiptOf = (hash: Hex) => chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined);
const transactionOf = (res: Response) => decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!).transaction as Hex;

for (const kind of databaseKinds) {
  describe(`skill server settlement modes (${kind} facilitator database)`, () => {
    let f: FacilitatorFixture;
    let payee: Address;
    const servers: SkillServer[] = [];
    const logger = recordingLogger();
    const start = async (extra: Partial<ServeOptions>) => {
      const server = await serve(skills, localServeOptions(chain, f, payee, logger, extra));
      servers.push(server);
      return server;
    };
    beforeAll(async () => {
      f = await startFacilitatorFixture(chain, kind);
      f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
      payee = (await chain.createAccount()).address;
    }, 60_000);
    afterAll(async () => {
      for (const s of servers) await s.stop();
      await f.facilitator.app.stop();
      await f.close();
    });

    for (const mode of ['broadcast', 'confirmed'] as const) {
      it(`${mode}: 20 concurrent submissions of one proof run once and transfer once, each answered the result; a retry gets the stored answer`, async () => {
        const server = await start({ settlement: mode });
        const url = `${server.url}/work`;
        const payer = await chain.createAccount({ usdc: PRICE * 10n });
        const proof = await proofFor(url, { n: 4 }, payer);
        const [payerBefore, payeeBefore] = await balances(chain, payer.address, payee);
        const before = runs.work;
        const responses = await Promise.all(Array.from({ length: 20 }, () => postJson(url, { n: 4 }, { 'X-Payment': proof })));
        // The copies wait for the first's answer and get it as a replay.
        expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
        const ok = responses.filter((r) => r.headers.get('X-Payment-Replayed') !== 'true');
        expect(ok).toHaveLength(1);
        expect(runs.work - before).toBe(1);
        const transaction = transactionOf(ok[0]!);
        expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
        const bodies = await Promise.all(responses.map((r) => r.text()));
        const first = bodies[responses.indexOf(ok[0]!)]!;
        expect(new Set(bodies)).toEqual(new Set([first]));

        const retry = await postJson(url, { n: 4 }, { 'X-Payment': proof });
        expect(retry.status).toBe(200);
        expect(await retry.text()).toBe(first);
        expect(transactionOf(retry)).toBe(transaction);
        expect(runs.work - before).toBe(1);
        await eventually(
          () => receiptOf(transaction),
          (r) => r?.status === 'success',
          'the transfer mined',
        );
        expect(await balances(chain, payer.address, payee)).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
      });
    }

    it('broadcast: the result and the transaction hash leave before the block; confirmed: after it', async () => {
      const broadcast = await start({ settlement: 'broadcast' });
      const confirmed = await start({ settlement: 'confirmed' });
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      const relayer = chain.accounts.relayer.address;
      const sent = await chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'latest' });
      await chain.testClient.setAutomine(false);
      const fast = await paidPost(`${broadcast.url}/work`, { n: 1 }, payer);
      expect(fast.status).toBe(200);
      expect(await receiptOf(transactionOf(fast))).toBeUndefined();

      let answered = false;
      const slow = paidPost(`${confirmed.url}/work`, { n: 2 }, payer).then((res) => {
        answered = true;
        return res;
      });
      await eventually(
        () => chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' }),
        (n) => n >= sent + 2,
        'both sent',
        5000,
      );
      expect(answered).toBe(false); // sent, not mined: the confirmed call is still waiting
      await chain.testClient.mine({ blocks: 1 });
      const res = await slow;
      expect(res.status).toBe(200);
      expect((await receiptOf(transactionOf(res)))?.status).toBe('success');
    });

    it("a call over the creator's cap of unconfirmed value per payer waits for its receipt", async () => {
      const capped = await start({ settlement: { mode: 'broadcast', maxUnconfirmedPerPayer: '$0.01' } });
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      await chain.testClient.setAutomine(false);
      const first = await paidPost(`${capped.url}/work`, { n: 1 }, payer);
      expect(first.status).toBe(200);
      expect(await receiptOf(transactionOf(first))).toBeUndefined(); // within the cap: answered at broadcast

      let answered = false;
      const second = paidPost(`${capped.url}/work`, { n: 2 }, payer).then((res) => {
        answered = true;
        return res;
      });
      const relayer = chain.accounts.relayer.address;
      const sent = await chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'latest' });
      await eventually(
        () => chain.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' }),
        (n) => n >= sent + 2,
        'both sent',
        5000,
      );
      expect(answered).toBe(false); // over the cap: waits for the block
      await chain.testClient.mine({ blocks: 1 });
      const res = await second;
      expect(res.status).toBe(200);
      expect((await receiptOf(transactionOf(res)))?.status).toBe('success');
    });

    it('120 concurrent calls from a wallet holding 3 prices get exactly 3 results, each a transfer, and 117 refusals for want of balance', async () => {
      const server = await start({}); // broadcast, the default
      const payer = await chain.createAccount({ usdc: PRICE * 3n });
      const payeeBefore = await chain.balanceOf(payee);
      const responses = await Promise.all(Array.from({ length: 120 }, (_, n) => paidPost(`${server.url}/work`, { n }, payer)));

      const results = responses.filter((r) => r.status === 200);
      expect(results).toHaveLength(3);
      const refused = responses.filter((r) => r.status !== 200);
      expect(refused.map((r) => r.status)).toEqual(refused.map(() => 402));
      const reasons = await Promise.all(refused.map(async (r) => ((await r.json()) as { error?: string }).error));
      expect(reasons).toEqual(refused.map(() => 'invalid_exact_evm_insufficient_balance'));
      // Each result carries a transfer that is mined, and there is no other: never charged without a result.
      const hashes = results.map(transactionOf);
      expect(await minedStatuses(chain, hashes)).toEqual(hashes.map(() => 'success'));
      expect((await transfersFrom(chain, payer.address)).sort()).toEqual([...hashes].sort());
      expect(await balances(chain, payer.address, payee)).toEqual([0n, payeeBefore + PRICE * 3n]);
    });

    it('a payer who drains their balance after a broadcast answer is refused afterwards', async () => {
      const server = await start({ settlement: 'broadcast' });
      const payer = await chain.createAccount({ usdc: PRICE });
      await chain.testClient.setAutomine(false);
      const answered = await paidPost(`${server.url}/work`, { n: 1 }, payer);
      expect(answered.status).toBe(200);
      await drainFirst(chain, payer, chain.accounts.payees[1]!.address, PRICE);
      expect((await receiptOf(transactionOf(answered)))?.status).toBe('reverted');
      await eventually(
        async () => logger.has('warn', 'a payment failed after its result was sent'),
        (seen) => seen,
        'the skill server learns of the revert',
      );
      await chain.mint(payer.address, PRICE);
      const before = runs.work;
      const refused = await paidPost(`${server.url}/work`, { n: 2 }, payer);
      expect(refused.status).toBe(402);
      expect(((await refused.json()) as { error: string }).error).toBe('invalid_exact_evm_payer_reverted_settlement');
      expect(runs.work).toBe(before);
      expect(await chain.balanceOf(payer.address)).toBe(PRICE);
    });

    it('asks nothing about the payments it answered once it has stopped', async () => {
      const firstCheckMs = 100;
      const settlement = { mode: 'broadcast', firstCheckMs } as const;
      const recording = recordingFetch();
      const server = await start({ fetch: recording.fetch, settlement });
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      expect((await paidPost(`${server.url}/work`, { n: 1 }, payer)).status).toBe(200);
      await server.stop();
      const asked = (sent: SentRequest[]) => sent.filter((r) => r.path.startsWith('/settlements')).length;
      const atStop = asked(recording.sent); // 0 unless the machine stalled for firstCheckMs after the answer
      // A running server answering after it asks firstCheckMs after its answer: once it has, the
      // stopped server would have asked too.
      const beside = recordingFetch();
      const running = await start({ fetch: beside.fetch, settlement });
      expect((await paidPost(`${running.url}/work`, { n: 2 }, payer)).status).toBe(200);
      await eventually(
        () => asked(beside.sent),
        (n) => n > 0,
        'the running server asks about its payment',
      );
      expect(asked(recording.sent)).toBe(atStop);
    });

    it('asks the facilitator about the payments it answered together in one request, and frees their caps', async () => {
      const recording = recordingFetch();
      const asked = () => recording.sent.filter((r) => r.path.startsWith('/settlements'));
      const count = (r: SentRequest) => (r.body as { authorizations?: unknown[] } | undefined)?.authorizations?.length ?? 1;
      // A cap of five prices per skill: five more calls are answered before their block only once the first five are confirmed.
      const server = await start({ fetch: recording.fetch, settlement: { mode: 'broadcast', maxUnconfirmedPerSkill: '$0.05' } });
      const payers = await Promise.all(Array.from({ length: 5 }, () => chain.createAccount({ usdc: PRICE * 2n })));
      const first = await Promise.all(payers.map((p, n) => paidPost(`${server.url}/work`, { n }, p)));
      expect(first.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      await eventually(
        async () => asked().reduce((sum, r) => sum + count(r), 0),
        (n) => n >= 5,
        'the five confirmations asked',
      );
      expect(asked().every((r) => r.method === 'POST' && r.path === '/settlements')).toBe(true);
      expect(asked().length).toBeLessThan(5);
      // The cap is free again: five more calls are answered before their block.
      await chain.testClient.setAutomine(false);
      const second = await Promise.all(payers.map((p, n) => paidPost(`${server.url}/work`, { n }, p)));
      expect(second.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(await Promise.all(second.map((r) => receiptOf(transactionOf(r))))).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      await chain.testClient.mine({ blocks: 1 });
    });
  });
}
