/**
 * A skill server whose facilitator settles in batches: concurrent paid calls from different payers
 * are paid by one Multicall3 transaction, each call's PAYMENT-RESPONSE naming it; one proof still
 * runs once and transfers once; the payee is credited exactly successes × price.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address, Hex } from 'viem';
import { serve, skill, type SkillServer } from 'skill-market/creator';
import { decodeSettleResponse } from 'skill-market/x402';
import { type LocalChain, startChain } from '../support/chain';
import { databaseKinds } from '../support/database';
import { type FacilitatorFixture, startFacilitatorFixture } from '../support/facilitator';
import { balances, localServeOptions, postJson, proofFor, recordingLogger } from '../support/skill-server';

const PRICE = 10_000n; // $0.01
let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 1, relayers: 1 });
}, 60_000);
afterAll(() => chain.stop());

let runs = 0;
const skills = {
  work: skill({ price: '$0.01' }, async (input: { n?: number }) => {
    runs++;
    return { doubled: (input.n ?? 0) * 2 };
  }),
};
const transactionOf = (res: Response) => decodeSettleResponse(res.headers.get('PAYMENT-RESPONSE')!).transaction as Hex;

for (const kind of databaseKinds) {
  describe(`skill server over a batching facilitator (${kind} database)`, () => {
    let f: FacilitatorFixture;
    let server: SkillServer;
    let payee: Address;
    const relayer = () => chain.accounts.relayer.address;
    const sent = () => chain.publicClient.getTransactionCount({ address: relayer() });
    beforeAll(async () => {
      // A full batch (5) goes at once; the wait only bounds a batch that does not fill, and is long
      // enough that 5 concurrent calls on a loaded machine still meet in one.
      f = await startFacilitatorFixture(chain, kind, { config: { batchMaxSize: 5, batchWaitMs: 2_000 } });
      f.facilitator.app.listen({ hostname: '127.0.0.1', port: 0 });
      payee = (await chain.createAccount()).address;
      server = await serve(skills, localServeOptions(chain, f, payee, recordingLogger(), { settlement: 'confirmed' }));
    }, 60_000);
    afterAll(async () => {
      await server.stop();
      await f.facilitator.app.stop();
      await f.close();
    });

    it('5 concurrent calls from 5 payers are paid by one transaction, the payee credited 5 × price', async () => {
      const payers = await Promise.all(Array.from({ length: 5 }, () => chain.createAccount({ usdc: PRICE })));
      const [payeeBefore] = await balances(chain, payee);
      const sentBefore = await sent();
      const before = runs;
      // Signed first, sent together: the calls reach the facilitator at once.
      const proofs = await Promise.all(payers.map((p, n) => proofFor(`${server.url}/work`, { n }, p)));
      const responses = await Promise.all(proofs.map((proof, n) => postJson(`${server.url}/work`, { n }, { 'X-Payment': proof })));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const hashes = new Set(responses.map(transactionOf));
      expect(hashes.size).toBe(1);
      expect(runs - before).toBe(5);
      expect(await sent()).toBe(sentBefore + 1);
      expect(await balances(chain, payee)).toEqual([payeeBefore + 5n * PRICE]);
      const receipt = await chain.publicClient.getTransactionReceipt({ hash: [...hashes][0] as Hex });
      expect(receipt.status).toBe('success');
    });

    it('20 concurrent submissions of one proof run once and transfer once, each answered the result; a retry gets the stored answer', async () => {
      const payer = await chain.createAccount({ usdc: PRICE * 2n });
      const url = `${server.url}/work`;
      const proof = await proofFor(url, { n: 7 }, payer);
      const [payerBefore, payeeBefore] = await balances(chain, payer.address, payee);
      const before = runs;
      const responses = await Promise.all(Array.from({ length: 20 }, () => postJson(url, { n: 7 }, { 'X-Payment': proof })));
      // The copies wait for the first's answer and get it as a replay.
      expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 200));
      const ok = responses.filter((r) => r.headers.get('X-Payment-Replayed') !== 'true');
      expect(ok).toHaveLength(1);
      expect(runs - before).toBe(1);
      const retry = await postJson(url, { n: 7 }, { 'X-Payment': proof });
      expect(retry.status).toBe(200);
      expect(transactionOf(retry)).toBe(transactionOf(ok[0]!));
      expect(runs - before).toBe(1);
      expect(await balances(chain, payer.address, payee)).toEqual([payerBefore - PRICE, payeeBefore + PRICE]);
    });
  });
}
