import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { type LocalChain, startChain } from '../support/chain';
import { databaseKinds } from '../support/database';
import { expectBoundedByBalance } from '../support/exposure';
import { PRICE, type FacilitatorFixture, paymentBody, requirementsFor, startFacilitatorFixture } from '../support/facilitator';

const COUNT = 50;

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain({ payers: 5, relayers: 4 });
}, 60_000);
afterAll(() => chain.stop());

const txCount = (address: Address) => chain.publicClient.getTransactionCount({ address });

for (const kind of databaseKinds) {
  describe(`concurrent settlement (${kind} database)`, () => {
    let single: FacilitatorFixture;
    let pooled: FacilitatorFixture;
    beforeAll(async () => {
      single = await startFacilitatorFixture(chain, kind, { relayers: [chain.accounts.relayers[0]!] });
      pooled = await startFacilitatorFixture(chain, kind, { relayers: chain.accounts.relayers.slice(1), database: single.database });
    }, 60_000);
    afterAll(async () => {
      await pooled.close();
      await single.close();
    });

    it(`${COUNT} concurrent settles of one verified proof make exactly one transfer`, async () => {
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, chain.accounts.payers[0]!, requirementsFor(chain, payee.address));
      expect((await single.facilitator.verify(body)).isValid).toBe(true);
      const relayer = chain.accounts.relayers[0]!.address;
      const sentBefore = await txCount(relayer);

      const results = await Promise.all(Array.from({ length: COUNT }, () => single.facilitator.settle(body)));

      expect(results.filter((r) => r.success)).toHaveLength(1);
      const refused = results.filter((r) => !r.success);
      expect(refused).toHaveLength(COUNT - 1);
      for (const r of refused) expect(r).toMatchObject({ errorReason: 'invalid_exact_evm_nonce_already_used', transaction: '' });
      expect(await chain.balanceOf(payee.address)).toBe(PRICE);
      expect(await txCount(relayer)).toBe(sentBefore + 1);
    });

    it(`${COUNT} concurrent settles of one never-verified proof, over HTTP, make exactly one transfer`, async () => {
      const payee = await chain.createAccount();
      const body = await paymentBody(chain, chain.accounts.payers[1]!, requirementsFor(chain, payee.address));
      const responses = await Promise.all(Array.from({ length: COUNT }, () => single.post('/settle', body)));
      expect(responses.every((r) => r.status === 200)).toBe(true);
      const results = (await Promise.all(responses.map((r) => r.json()))) as { success: boolean; errorReason?: string }[];
      expect(results.filter((r) => r.success)).toHaveLength(1);
      expect(results.filter((r) => r.errorReason === 'invalid_exact_evm_nonce_already_used')).toHaveLength(COUNT - 1);
      expect(await chain.balanceOf(payee.address)).toBe(PRICE);
    });

    it(`${COUNT} concurrent verifies of one proof accept it exactly once`, async () => {
      const body = await paymentBody(chain, chain.accounts.payers[2]!, requirementsFor(chain, chain.accounts.payee.address));
      const verdicts = await Promise.all(Array.from({ length: COUNT }, () => single.facilitator.verify(body)));
      expect(verdicts.filter((v) => v.isValid)).toHaveLength(1);
      expect(verdicts.filter((v) => v.invalidReason === 'invalid_exact_evm_nonce_already_used')).toHaveLength(COUNT - 1);
    });

    it('120 concurrent paid calls (verify, broadcast settle) from a wallet holding 3 prices get exactly 3 results, each a transfer', async () => {
      await expectBoundedByBalance(chain, [single.facilitator], 120, 3);
    });

    it(`${COUNT} distinct concurrent payments through one relayer make ${COUNT} transfers without nonce collisions`, async () => {
      const payee = await chain.createAccount();
      const requirements = requirementsFor(chain, payee.address);
      const bodies = await Promise.all(
        Array.from({ length: COUNT }, (_, i) => paymentBody(chain, chain.accounts.payers[i % chain.accounts.payers.length]!, requirements)),
      );
      const relayer = chain.accounts.relayers[0]!.address;
      const sentBefore = await txCount(relayer);

      const results = await Promise.all(bodies.map((b) => single.facilitator.settle(b)));

      expect(results.filter((r) => !r.success)).toEqual([]);
      expect(new Set(results.map((r) => r.transaction)).size).toBe(COUNT);
      expect(await chain.balanceOf(payee.address)).toBe(PRICE * BigInt(COUNT));
      expect(await txCount(relayer)).toBe(sentBefore + COUNT);
      const nonces = await Promise.all(
        results.map(async (r) => (await chain.publicClient.getTransaction({ hash: r.transaction as `0x${string}` })).nonce),
      );
      expect([...nonces].sort((a, b) => a - b)).toEqual(Array.from({ length: COUNT }, (_, i) => sentBefore + i));
    });

    it(`${COUNT} distinct concurrent payments spread over a pool of relayer keys`, async () => {
      const payee = await chain.createAccount();
      const requirements = requirementsFor(chain, payee.address);
      const bodies = await Promise.all(
        Array.from({ length: COUNT }, (_, i) => paymentBody(chain, chain.accounts.payers[i % chain.accounts.payers.length]!, requirements)),
      );
      const relayers = chain.accounts.relayers.slice(1).map((r) => r.address);
      const before = await Promise.all(relayers.map(txCount));

      const results = await Promise.all(bodies.map((b) => pooled.facilitator.settle(b)));

      expect(results.filter((r) => !r.success)).toEqual([]);
      expect(await chain.balanceOf(payee.address)).toBe(PRICE * BigInt(COUNT));
      const sent = (await Promise.all(relayers.map(txCount))).map((n, i) => n - before[i]!);
      expect(sent.reduce((a, b) => a + b, 0)).toBe(COUNT);
      for (const n of sent) expect(n).toBeGreaterThan(0);
      expect((await pooled.facilitator.supported()).signers?.['eip155:*']).toEqual(relayers);
    });
  });
}
