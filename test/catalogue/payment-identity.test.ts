/**
 * What one payment counts for, on a real chain (anvil with our EIP-3009 token): a payment is one
 * transfer — (transaction, log index), named in a call record by the payer's authorization nonce
 * — so a Multicall3 batch of many payments to one payee counts each, one transfer counts for one
 * skill only (the one whose skill server reported the call), and paying oneself counts nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { encodeFunctionData, type Address, type Hash } from 'viem';
import { paymentVerifications } from '../../src/db/schema';
import { bearer, jsonPost } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { MULTICALL3_ADDRESS, multicall3Abi, startChain, usdCoinAbi, type LocalChain, type TestAccount } from '../support/chain';
import { signAuthorization, vrsArgs, type SignedAuthorization } from '../support/chain/authorization';
import { oneDatabase } from '../support/database';
import { registryFixture, chainVerifier } from '../support/registry';

const PRICE = 1000n; // $0.001

for (const kind of oneDatabase) {
  describe(`what one payment counts for on ${kind}`, () => {
    const fx = registryFixture(kind);
    let chain: LocalChain;
    let creator: Creator;
    let group: string;

    beforeAll(async () => {
      chain = await startChain({ payers: 3, payees: 1 });
      creator = await newCreator(fx.request);
      group = (await creator.group()).name;
    }, 60_000);
    afterAll(() => chain?.stop());

    const verifyAll = async () => {
      const verifier = chainVerifier(fx, chain);
      while ((await verifier.verifyNow()).checked > 0);
    };
    /** A fresh payee the creator has proven holding. */
    const newPayee = async (): Promise<Address> => {
      const account = await chain.createAccount();
      await creator.prove(account);
      return account.address;
    };
    const listSkill = async (payTo: Address) => {
      const res = await creator.register({ price: '$0.001', paymentAddress: payTo, network: chain.network, groups: [group] });
      expect(res.status).toBe(201);
      const skill = await json(res);
      return { id: skill.id as string, slug: skill.slug as string };
    };
    /** Settles the authorizations in one transaction, as a batching facilitator does (Multicall3 `aggregate3`). */
    const settleTogether = async (signed: SignedAuthorization[]): Promise<Hash> => {
      const calls = signed.map((s) => ({
        target: chain.token.address,
        allowFailure: false,
        callData: encodeFunctionData({ abi: usdCoinAbi, functionName: 'transferWithAuthorization', args: vrsArgs(s) }),
      }));
      const hash = await chain
        .walletClient(chain.accounts.relayer)
        .writeContract({ address: MULTICALL3_ADDRESS, abi: multicall3Abi, functionName: 'aggregate3', args: [calls] });
      expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
      return hash;
    };
    const pay = (from: TestAccount, to: Address) => signAuthorization(chain, from, { to, value: PRICE });
    const callRecords = (calls: Record<string, unknown>[]) => fx.request('/analytics/calls', jsonPost({ calls }, bearer(creator.key)));
    const bareReport = (skillSlug: string, paymentTxHash: string) =>
      fx.request(
        '/analytics/usage',
        jsonPost({ skillSlug, consumerAddress: chain.accounts.payer.address, paymentTxHash, amount: '$0.001' }),
      );
    const stats = async (skillId: string) => json(await fx.request(`/analytics/${skillId}`));
    const checksOf = (skillId: string) =>
      fx.database.db.select().from(paymentVerifications).where(eq(paymentVerifications.skillId, skillId));

    it('counts every payment of a batch settled in one transaction to one payee', async () => {
      const payee = await newPayee();
      const skill = await listSkill(payee);
      const [a, b, c] = chain.accounts.payers;
      // Three payers, one of them twice: four payments, one transaction, one payee.
      const signed = [await pay(a!, payee), await pay(b!, payee), await pay(c!, payee), await pay(a!, payee)];
      const hash = await settleTogether(signed);
      const records = signed.map((s) => ({ skillId: skill.id, amount: '0.001', paymentRef: hash, paymentNonce: s.authorization.nonce }));
      const res = await callRecords([...records, records[0]!]);
      expect(res.status).toBe(200);
      expect((await json(res)).results.map((r: { status: string }) => r.status)).toEqual([
        'recorded',
        'recorded',
        'recorded',
        'recorded',
        'duplicate',
      ]);
      // The same transaction reported bare by a consumer's client: a repeat, not a fifth payment.
      expect((await bareReport(skill.slug, hash)).status).toBe(200);
      await verifyAll();

      expect(await stats(skill.id)).toMatchObject({ callCount: 4, paidCallCount: 4, totalRevenueAtomic: '4000' });
      const checks = await checksOf(skill.id);
      const counted = checks.filter((c) => c.logIndex !== null);
      expect(counted).toHaveLength(4);
      expect(new Set(counted.map((c) => c.logIndex)).size).toBe(4);
      expect(counted.map((c) => c.payer).sort()).toEqual([a!.address, a!.address, b!.address, c!.address].sort());
      expect(checks.every((c) => c.status === 'verified')).toBe(true);
    });

    it('counts one payment reported for three skills with one payout address once, for the skill its call names', async () => {
      const payee = await newPayee();
      const named = await listSkill(payee);
      const others = [await listSkill(payee), await listSkill(payee)];
      const signed = await pay(chain.accounts.payers[1]!, payee);
      const hash = await settleTogether([signed]);
      // The credential-free report names the other skills first, and is checked first.
      for (const other of others) expect((await bareReport(other.slug, hash)).status).toBe(200);
      await verifyAll();
      // The skill server's call record names the skill the paid request was for.
      const record = { skillId: named.id, amount: '0.001', paymentRef: hash, paymentNonce: signed.authorization.nonce };
      expect((await callRecords([record])).status).toBe(200);
      await verifyAll();
      // Another skill's call record naming the same payment, now counted: refused.
      const elsewhere = await callRecords([{ ...record, skillId: others[0]!.id }]);
      expect(elsewhere.status).toBe(200);
      expect((await json(elsewhere)).results).toEqual([
        { status: 'refused', reason: 'counted-elsewhere', message: 'This payment already counts as a call of another skill' },
      ]);
      await verifyAll();

      expect(await stats(named.id)).toMatchObject({ paidCallCount: 1, totalRevenueAtomic: '1000' });
      for (const other of others) {
        expect(await stats(other.id)).toMatchObject({ callCount: 0, paidCallCount: 0, totalRevenueAtomic: '0' });
        expect((await checksOf(other.id)).every((c) => c.status === 'rejected')).toBe(true);
      }
    });

    it('never counts a payment from the skill’s own payment address', async () => {
      const self = chain.accounts.payers[2]!;
      await creator.prove(self);
      const skill = await listSkill(self.address);
      const payments = [await pay(self, self.address), await pay(self, self.address)];
      const hash = await settleTogether(payments);
      const records = payments.map((s) => ({ skillId: skill.id, amount: '0.001', paymentRef: hash, paymentNonce: s.authorization.nonce }));
      expect((await callRecords(records)).status).toBe(200);
      // The same transaction reported bare joins a check already there.
      expect((await bareReport(skill.slug, hash)).status).toBe(200);
      await verifyAll();

      expect(await stats(skill.id)).toMatchObject({ callCount: 0, paidCallCount: 0, totalRevenueAtomic: '0', rejectedPaymentCount: 2 });
      for (const check of await checksOf(skill.id)) {
        expect(check).toMatchObject({
          status: 'rejected',
          reason: 'a payment from the skill’s own payment address or another address of its creator is not a paid call',
        });
      }
    });
  });
}
