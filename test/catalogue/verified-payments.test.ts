/**
 * Revenue and paid calls come from payments verified on chain (anvil with our EIP-3009 token):
 * reports only nominate a transaction; the receipt and the listing decide. Checks are driven by
 * `verifyNow()` and the fixture's manual clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { encodeFunctionData, type Address, type Hash } from 'viem';
import { PAYMENT_VERIFICATION_DEFAULTS } from '../../src/config';
import { paymentVerifications } from '../../src/db/schema';
import { bearer, createKey, jsonPost, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { compileContracts, startChain, usdCoinAbi, type LocalChain, type TestAccount } from '../support/chain';
import { databaseKinds } from '../support/database';
import { eventually } from '../support/eventually';
import { registryFixture, chainVerifier } from '../support/registry';

const PRICE = 1000n; // $0.001

for (const kind of databaseKinds) {
  describe(`verified payments on ${kind}`, () => {
    const fx = registryFixture(kind);
    let chain: LocalChain;
    let creator: Creator;
    let group: string;
    let consumerKey: string;
    let otherToken: Address;
    const config = { ...PAYMENT_VERIFICATION_DEFAULTS, enabled: false, maxAttempts: 3, retryBaseSeconds: 10 };

    beforeAll(async () => {
      chain = await startChain({ payers: 2, payees: 1 });
      creator = await newCreator(fx.request);
      group = (await creator.group()).name;
      const consumer = await walletSignIn(fx.request);
      consumerKey = (await createKey(fx.request, consumer.token, 'consumer')).key;
      // A second token, the same contract at another address: "the listed asset" is one of them only.
      const { UsdCoin } = await compileContracts();
      const deployer = chain.walletClient(chain.accounts.deployer);
      const hash = await deployer.deployContract({ abi: usdCoinAbi, bytecode: UsdCoin.bytecode });
      otherToken = (await chain.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
      await chain.publicClient.waitForTransactionReceipt({
        hash: await deployer.writeContract({
          address: otherToken,
          abi: usdCoinAbi,
          functionName: 'mint',
          args: [chain.accounts.payer.address, 1_000_000n],
        }),
      });
    }, 60_000);
    afterAll(() => chain?.stop());

    const verifier = () => chainVerifier(fx, chain, config);

    /** Lists a skill at $0.001 paid to a fresh address, on the chain's network unless told. */
    const listSkill = async (network: string = chain.network, by = creator, groupName = group) => {
      const payToAccount = await chain.createAccount();
      await by.prove(payToAccount);
      const payTo = payToAccount.address;
      const res = await by.register({ price: '$0.001', paymentAddress: payTo, network, groups: [groupName] });
      expect(res.status).toBe(201);
      const skill = await json(res);
      return { id: skill.id as string, slug: skill.slug as string, payTo };
    };
    const transfer = async (from: TestAccount, to: Address, value: bigint, asset: Address = chain.token.address): Promise<Hash> => {
      const hash = await chain
        .walletClient(from)
        .writeContract({ address: asset, abi: usdCoinAbi, functionName: 'transfer', args: [to, value] });
      await chain.publicClient.waitForTransactionReceipt({ hash });
      return hash;
    };
    const report = (
      skillSlug: string,
      paymentTxHash: string,
      amount: string | number = '$0.001',
      consumerAddress: string = chain.accounts.payer.address,
    ) => fx.request('/analytics/usage', jsonPost({ skillSlug, consumerAddress, paymentTxHash, amount }));
    const stats = async (skillId: string) => json(await fx.request(`/analytics/${skillId}`));
    const checksOf = (skillId: string) =>
      fx.database.db.select().from(paymentVerifications).where(eq(paymentVerifications.skillId, skillId));

    it('counts a real payment reported in the other SDK’s shape without a credential, once verified on chain', async () => {
      const skill = await listSkill();
      const hash = await transfer(chain.accounts.payer, skill.payTo, PRICE);
      const res = await report(skill.slug, hash);
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ success: true, recorded: true });
      expect(await stats(skill.id)).toMatchObject({ callCount: 0, paidCallCount: 0, totalRevenueAtomic: '0' });

      expect(await verifier().verifyNow()).toMatchObject({ checked: 1, verified: 1 });
      expect(await stats(skill.id)).toMatchObject({ callCount: 1, paidCallCount: 1, totalRevenueAtomic: '1000', totalRevenue: '0.001' });
      expect(await json(await fx.request(`/skills/${skill.slug}`))).toMatchObject({
        callCount: 1,
        paidCallCount: 1,
        totalRevenue: '0.001',
      });
      const [check] = await checksOf(skill.id);
      expect(check).toMatchObject({ status: 'verified', payer: chain.accounts.payer.address, amount: PRICE, txHash: hash.toLowerCase() });
      expect((await stats(skill.id)).daily.at(-1)).toMatchObject({ calls: 1, revenue: '0.001' });
    });

    it('counts one transaction once, however many records name it and however concurrently', async () => {
      const skill = await listSkill();
      const hash = await transfer(chain.accounts.payer, skill.payTo, PRICE);
      /** As clients do: a 503 (the database busy past a statement's deadline) is sent again after a pause. */
      const retried = async (send: () => Promise<Response>) => {
        for (let attempt = 1; ; attempt++) {
          const res = await send();
          if (res.status !== 503 || attempt === 5) return res;
          await Bun.sleep(200 * attempt);
        }
      };
      const records = [
        ...Array.from({ length: 5 }, () =>
          retried(() =>
            fx.request('/analytics/call', jsonPost({ skillId: skill.id, amount: '0.001', paymentRef: hash }, bearer(creator.key))),
          ),
        ),
        ...Array.from({ length: 5 }, () =>
          retried(() =>
            fx.request('/analytics/usage', jsonPost({ skillId: skill.id, amount: 1000, paymentRef: hash }, bearer(consumerKey))),
          ),
        ),
        ...Array.from({ length: 5 }, (_, i) =>
          retried(() => report(skill.slug, i % 2 ? hash : hash.toUpperCase().replace('0X', '0x'), i % 2 ? 1000 : '0.001')),
        ),
      ];
      expect((await Promise.all(records)).map((r) => r.status)).toEqual(Array(15).fill(200));
      expect(await checksOf(skill.id)).toHaveLength(1);
      // Two registry instances checking at once: one claims the check, the other skips it.
      const rounds = await Promise.all([verifier().verifyNow(), verifier().verifyNow()]);
      expect(rounds.reduce((sum, r) => sum + r.verified, 0)).toBe(1);
      expect(await verifier().verifyNow()).toMatchObject({ checked: 0 });
      expect(await stats(skill.id)).toMatchObject({ callCount: 1, paidCallCount: 1, totalRevenueAtomic: '1000' });
    });

    it('never counts a made-up or mismatched reference, and keeps each as rejected with the reason', async () => {
      const cases: { name: string; skill: Awaited<ReturnType<typeof listSkill>>; ref: string; reason: RegExp }[] = [];
      const add = async (
        name: string,
        reason: RegExp,
        pay: (skill: Awaited<ReturnType<typeof listSkill>>) => Promise<string>,
        network?: string,
      ) => {
        const skill = await listSkill(network);
        cases.push({ name, skill, ref: await pay(skill), reason });
      };
      await add('made up, not a hash', /^not a transaction hash$/, async () => '0xdeadbeef-made-up');
      await add('a hash no transaction has', /^transaction not found on chain after 3 checks$/, async () => `0x${'ab'.repeat(32)}`);
      await add('wrong payee', /^the transfer goes to 0x[0-9a-fA-F]{40}, not the skill's payment address/, async () =>
        transfer(chain.accounts.payer, chain.accounts.payee.address, PRICE),
      );
      await add('wrong amount', /^the transfer is 1001 atomic units, the listed price is 1000$/, (s) =>
        transfer(chain.accounts.payer, s.payTo, PRICE + 1n),
      );
      await add('wrong asset', /^no transfer of the listed asset/, (s) => transfer(chain.accounts.payer, s.payTo, PRICE, otherToken));
      await add('reverted transaction', /^payment reverted on chain: the payer was not charged$/, async (s) => {
        const broke = await chain.createAccount(); // holds no USDC: the transfer reverts on chain
        const hash = await chain.walletClient(broke).sendTransaction({
          to: chain.token.address,
          data: encodeFunctionData({ abi: usdCoinAbi, functionName: 'transfer', args: [s.payTo, PRICE] }),
          gas: 100_000n,
        });
        expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('reverted');
        return hash;
      });
      await add(
        'listed on another network',
        /^the skill is paid on eip155:8453; this registry verifies payments on eip155:84532 only$/,
        (s) => transfer(chain.accounts.payer, s.payTo, PRICE),
        'eip155:8453',
      );

      for (const c of cases) {
        const res = await fx.request(
          '/analytics/usage',
          jsonPost({ skillId: c.skill.id, amount: 500_000_000, paymentRef: c.ref }, bearer(consumerKey)),
        );
        expect({ name: c.name, status: res.status }).toEqual({ name: c.name, status: 200 });
        await fx.request('/analytics/call', jsonPost({ skillId: c.skill.id, paymentRef: c.ref }, bearer(creator.key)));
      }
      const v = verifier();
      await v.verifyNow();
      for (let i = 1; i < config.maxAttempts; i++) {
        fx.clock.advance(config.retryBaseSeconds * 2 ** (i - 1));
        await v.verifyNow();
      }
      for (const c of cases) {
        expect({ name: c.name, ...(await stats(c.skill.id)) }).toMatchObject({
          name: c.name,
          callCount: 0,
          paidCallCount: 0,
          totalRevenueAtomic: '0',
        });
        const checks = await checksOf(c.skill.id);
        expect({ name: c.name, count: checks.length, status: checks[0]?.status }).toEqual({ name: c.name, count: 1, status: 'rejected' });
        expect({ name: c.name, reason: checks[0]!.reason }).toEqual({ name: c.name, reason: expect.stringMatching(c.reason) });
      }
    });

    it('refuses another SDK’s report for an unknown skill, with a malformed hash, or with an amount that is not the listed price', async () => {
      const skill = await listSkill();
      const hash = `0x${'cd'.repeat(32)}`;
      expect((await report('no-such-skill', hash)).status).toBe(404);
      expect((await report(skill.slug, '0xdeadbeef')).status).toBe(400);
      expect((await report(skill.slug, hash, '$0.001', 'nobody')).status).toBe(400);
      const wrong = await report(skill.slug, hash, '$500');
      expect(wrong.status).toBe(400);
      expect((await json(wrong)).error).toBe(
        'Invalid request: field "amount": 500000000 micro-USDC is not the listed price (1000 micro-USDC)',
      );
      for (const amount of ['$0.001', '0.001', 1000, '1000']) expect((await report(skill.slug, hash, amount)).status).toBe(200);
      expect(await checksOf(skill.id)).toHaveLength(1);
    });

    it('counts a call reported without a reference as an unpaid call and never as revenue', async () => {
      const skill = await listSkill();
      expect((await fx.request('/analytics/call', jsonPost({ skillId: skill.id, amount: '0.001' }, bearer(creator.key)))).status).toBe(200);
      expect((await fx.request('/analytics/usage', jsonPost({ skillId: skill.id, amount: 1000 }, bearer(consumerKey)))).status).toBe(200);
      await verifier().verifyNow();
      expect(await stats(skill.id)).toMatchObject({ callCount: 1, paidCallCount: 0, totalRevenueAtomic: '0' });
    });

    it('ranks sort=revenue and sort=popular by verified payments only', async () => {
      const ranker = await newCreator(fx.request);
      const rankerGroup = (await ranker.group()).name;
      const honest = await listSkill(chain.network, ranker, rankerGroup);
      const inflated = await listSkill(chain.network, ranker, rankerGroup);
      await report(honest.slug, await transfer(chain.accounts.payers[1]!, honest.payTo, PRICE));
      for (let i = 0; i < 5; i++) {
        const fake = `0x${crypto.randomUUID().replaceAll('-', '').padEnd(64, '0')}`;
        await fx.request(
          '/analytics/usage',
          jsonPost({ skillId: inflated.id, amount: 500_000_000, paymentRef: fake }, bearer(consumerKey)),
        );
        await fx.request('/analytics/call', jsonPost({ skillId: inflated.id, amount: '500', paymentRef: fake }, bearer(ranker.key)));
      }
      const v = verifier();
      for (let i = 0; i < config.maxAttempts; i++) {
        await v.verifyNow();
        fx.clock.advance(config.retryBaseSeconds * 2 ** i);
      }
      const order = async (sort: string) =>
        (await json<any[]>(await fx.request(`/skills?creator=${ranker.address}&sort=${sort}`))).map((s) => s.slug);
      expect(await order('revenue')).toEqual([honest.slug, inflated.slug]);
      expect(await order('popular')).toEqual([honest.slug, inflated.slug]);
      expect(await stats(inflated.id)).toMatchObject({ paidCallCount: 0, totalRevenueAtomic: '0' });
    });

    it('checks reported payments in the background once started', async () => {
      const skill = await listSkill();
      await report(skill.slug, await transfer(chain.accounts.payer, skill.payTo, PRICE));
      const v = chainVerifier(fx, chain, { ...config, intervalMs: 50 });
      v.start();
      try {
        await eventually(
          () => checksOf(skill.id),
          (seen) => seen[0]?.status === 'verified',
          'the background verifier verifies the payment',
        );
      } finally {
        await v.stop();
      }
      expect((await stats(skill.id)).paidCallCount).toBe(1);
    });

    it('links each record to its check, so a history can show the verification state', async () => {
      const skill = await listSkill();
      const hash = await transfer(chain.accounts.payer, skill.payTo, PRICE);
      await fx.request('/analytics/usage', jsonPost({ skillId: skill.id, amount: 1000, paymentRef: hash }, bearer(consumerKey)));
      const { paymentStatus } = await import('../../src/registry/modules/payment-verification');
      const { usageRecords } = await import('../../src/db/schema');
      const state = async () =>
        (
          await fx.database.db
            .select({ payment: paymentStatus(usageRecords.paymentId) })
            .from(usageRecords)
            .where(eq(usageRecords.skillId, skill.id))
        )[0]?.payment;
      expect(await state()).toBe('pending');
      await verifier().verifyNow();
      expect(await state()).toBe('verified');
    });
  });
}
