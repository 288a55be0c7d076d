/**
 * Reviews by verified buyers: only an account with a payment to the skill verified on chain
 * (anvil, our token) may review it; listings carry the exact average and count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Address } from 'viem';
import { paymentVerifications } from '../../src/db/schema';
import { bearer, jsonPost, walletSignIn } from '../support/auth';
import { json, newCreator, untilAnswered, type Creator } from '../support/catalogue';
import { startChain, usdCoinAbi, type LocalChain, type TestAccount } from '../support/chain';
import { databaseKinds } from '../support/database';
import { registryFixture, chainVerifier } from '../support/registry';

const PRICE = 1000n;

for (const kind of databaseKinds) {
  describe(`reviews on ${kind}`, () => {
    const fx = registryFixture(kind);
    let chain: LocalChain;
    let creator: Creator;
    let group: string;

    beforeAll(async () => {
      chain = await startChain({ payers: 1, payees: 1 });
      creator = await newCreator(fx.request);
      group = (await creator.group()).name;
    }, 60_000);
    afterAll(() => chain?.stop());

    const listSkill = async () => {
      const payToAccount = await chain.createAccount();
      await creator.prove(payToAccount);
      const payTo = payToAccount.address;
      const res = await creator.register({ price: '$0.001', paymentAddress: payTo, network: chain.network, groups: [group] });
      expect(res.status).toBe(201);
      const skill = await json(res);
      return { id: skill.id as string, slug: skill.slug as string, payTo };
    };
    /** Pays the skill from `from` on chain, reports it like another SDK, and runs the verifier. */
    const payAndVerify = async (skill: { slug: string; payTo: Address }, from: TestAccount) => {
      const hash = await chain
        .walletClient(from)
        .writeContract({ address: chain.token.address, abi: usdCoinAbi, functionName: 'transfer', args: [skill.payTo, PRICE] });
      await chain.publicClient.waitForTransactionReceipt({ hash });
      const res = await fx.request(
        '/analytics/usage',
        jsonPost({ skillSlug: skill.slug, consumerAddress: from.address, paymentTxHash: hash, amount: '$0.001' }),
      );
      expect(res.status).toBe(200);
      const round = await chainVerifier(fx, chain).verifyNow();
      expect(round.verified).toBe(1);
    };
    /** Test data: a payment from `payer` already verified (for tests about many buyers at once). */
    const verifiedPaymentFrom = (skill: { id: string; payTo: string }, payer: string) =>
      fx.database.db.insert(paymentVerifications).values({
        skillId: skill.id,
        txHash: `0x${crypto.randomUUID().replaceAll('-', '').padEnd(64, 'f')}`,
        status: 'verified',
        expectedAmount: PRICE,
        payTo: skill.payTo,
        network: chain.network,
        payer,
        amount: PRICE,
        nextAttemptAt: fx.clock.now(),
        createdAt: fx.clock.now(),
        decidedAt: fx.clock.now(),
      });
    // Our clients' dialect (stars): their requests accept application/json (reviews.dialects.test.ts has the other one).
    const ours = { accept: 'application/json' };
    const review = (token: string, body: Record<string, unknown>) => fx.request('/reviews', jsonPost(body, { ...bearer(token), ...ours }));
    const reviewsOf = (path: string) => fx.request(path, { headers: ours });
    const listing = async (slug: string) => json(await fx.request(`/skills/${slug}`));

    it('refuses a review from an account without a verified payment to the skill (403), even with one reported but unverified', async () => {
      const skill = await listSkill();
      const stranger = await walletSignIn(fx.request);
      const refused = await review(stranger.token, { skillSlug: skill.slug, score: 5 });
      expect(refused.status).toBe(403);
      expect((await json(refused)).error).toBe('Only buyers can review a skill: no verified payment to it from your wallets');
      await fx.request(
        '/analytics/usage',
        jsonPost({ skillSlug: skill.slug, consumerAddress: stranger.wallet.address, paymentTxHash: `0x${'12'.repeat(32)}`, amount: 1000 }),
      );
      expect((await review(stranger.token, { skillSlug: skill.slug, score: 5 })).status).toBe(403);
      expect(await listing(skill.slug)).toMatchObject({ rating: null, reviewCount: 0 });
    });

    it('accepts a buyer whose payment is verified on chain; a second post updates the one review', async () => {
      const skill = await listSkill();
      const wallet = await chain.createAccount({ usdc: 1_000_000n });
      const buyer = await walletSignIn(fx.request, wallet);
      await payAndVerify(skill, wallet);
      const first = await review(buyer.token, { skillSlug: skill.slug, score: 4, comment: 'Fast and right' });
      expect(first.status).toBe(201);
      const created = await json(first);
      expect(created).toMatchObject({
        skillId: skill.id,
        consumerAddress: wallet.address,
        score: 4,
        comment: 'Fast and right',
        reply: null,
      });
      expect(await listing(skill.slug)).toMatchObject({ rating: 4, reviewCount: 1 });

      const second = await review(buyer.token, { skillSlug: skill.slug, score: 2 });
      expect(second.status).toBe(200);
      expect(await json(second)).toMatchObject({ id: created.id, score: 2, comment: null });
      expect(await listing(skill.slug)).toMatchObject({ rating: 2, reviewCount: 1 });
      expect(await json<any[]>(await reviewsOf(`/skills/${skill.slug}/reviews`))).toEqual([
        {
          id: created.id,
          skillId: skill.id,
          consumerAddress: wallet.address,
          score: 2,
          comment: null,
          reply: null,
          repliedAt: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      ]);
    });

    /** Registers `wallet` to the account, signing the registry's message with the wallet's key. */
    const registerProven = async (token: string, wallet: TestAccount) => {
      const challenge = await fx.request('/wallet/challenge', jsonPost({ address: wallet.address }, bearer(token)));
      expect(challenge.status).toBe(200);
      const { message } = await json(challenge);
      const signature = await wallet.signMessage({ message });
      return fx.request('/wallet/generate', jsonPost({ address: wallet.address, proof: { message, signature } }, bearer(token)));
    };

    it('accepts a buyer who paid from a spending wallet they proved they hold', async () => {
      const skill = await listSkill();
      const buyer = await walletSignIn(fx.request);
      const spending = await chain.createAccount({ usdc: 1_000_000n });
      expect((await registerProven(buyer.token, spending)).status).toBe(201);
      await payAndVerify(skill, spending);
      expect((await review(buyer.token, { skillSlug: skill.slug, score: 5 })).status).toBe(201);
    });

    it('refuses a review through a stranger’s wallet registered without its key, and accepts the real payer’s', async () => {
      const skill = await listSkill();
      const payer = await chain.createAccount({ usdc: 1_000_000n });
      const realPayer = await walletSignIn(fx.request, payer);
      const squatter = await walletSignIn(fx.request);
      // The squatter registers the stranger's paying address as their spending wallet: no key, no proof.
      expect((await fx.request('/wallet/generate', jsonPost({ address: payer.address }, bearer(squatter.token)))).status).toBe(201);
      await payAndVerify(skill, payer);
      const refused = await review(squatter.token, { skillSlug: skill.slug, score: 1 });
      expect(refused.status).toBe(403);
      expect((await json(refused)).code).toBe('FORBIDDEN');
      // A proof signed by another key, or for another account, or altered, does not hold.
      const challenge = await json(await fx.request('/wallet/challenge', jsonPost({ address: payer.address }, bearer(squatter.token))));
      const own = await squatter.wallet.signMessage({ message: challenge.message });
      const forged = await fx.request(
        '/wallet/generate',
        jsonPost({ address: payer.address, proof: { message: challenge.message, signature: own } }, bearer(squatter.token)),
      );
      expect(forged.status).toBe(400);
      expect((await json(forged)).error).toStartWith('Invalid request: field "proof": ');
      const realChallenge = await json(
        await fx.request('/wallet/challenge', jsonPost({ address: payer.address }, bearer(realPayer.token))),
      );
      const stolen = await fx.request(
        '/wallet/generate',
        jsonPost(
          {
            address: payer.address,
            proof: { message: realChallenge.message, signature: await payer.signMessage({ message: realChallenge.message }) },
          },
          bearer(squatter.token),
        ),
      );
      expect(stolen.status).toBe(400);
      expect((await review(squatter.token, { skillSlug: skill.slug, score: 1 })).status).toBe(403);
      // The one who paid reviews, and takes the address back by proving it.
      expect((await review(realPayer.token, { skillSlug: skill.slug, score: 5 })).status).toBe(201);
      expect(await listing(skill.slug)).toMatchObject({ reviewCount: 1 });
      expect((await registerProven(realPayer.token, payer)).status).toBe(201);
      expect(
        (await json(await fx.request('/wallet/all', { headers: bearer(squatter.token) }))).map((w: { address: string }) => w.address),
      ).toEqual([]);
    });

    it('refuses an expired proof', async () => {
      const buyer = await walletSignIn(fx.request);
      const spending = await chain.createAccount();
      const { message } = await json(await fx.request('/wallet/challenge', jsonPost({ address: spending.address }, bearer(buyer.token))));
      fx.clock.advance(601);
      const late = await fx.request(
        '/wallet/generate',
        jsonPost(
          { address: spending.address, proof: { message, signature: await spending.signMessage({ message }) } },
          bearer(buyer.token),
        ),
      );
      expect(late.status).toBe(400);
      expect((await json(late)).error).toBe(
        'Invalid request: field "proof": the message has expired: ask POST /wallet/challenge for a new one',
      );
    });

    it('keeps the average and count exact under 50 concurrent reviews and 50 concurrent updates', async () => {
      const skill = await listSkill();
      const buyers = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const buyer = await walletSignIn(fx.request);
          await verifiedPaymentFrom(skill, buyer.wallet.address);
          return buyer;
        }),
      );
      const scores = buyers.map((_, i) => (i % 5) + 1);
      // Under load some of 50 transactions on one skill's rating wait past the statement deadline (503):
      // sent again, as a client would; one review per buyer, so a repeat cannot count twice.
      const posted = await Promise.all(
        buyers.map((b, i) => untilAnswered(() => review(b.token, { skillSlug: skill.slug, score: scores[i] }))),
      );
      expect(posted.map((r) => r.status)).toEqual(Array(50).fill(201));
      expect(await listing(skill.slug)).toMatchObject({ reviewCount: 50, rating: scores.reduce((a, b) => a + b, 0) / 50 });

      const updated = buyers.map((_, i) => (i % 2 ? 5 : 1));
      const again = await Promise.all(
        buyers.map((b, i) => untilAnswered(() => review(b.token, { skillSlug: skill.slug, score: updated[i] }))),
      );
      expect(again.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(await listing(skill.slug)).toMatchObject({ reviewCount: 50, rating: updated.reduce((a, b) => a + b, 0) / 50 });

      // Newest first, paged by cursor: every review exactly once.
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: Response = await fx.request(`/skills/${skill.slug}/reviews?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        seen.push(...(await json<any[]>(res)).map((r) => r.id));
        cursor = res.headers.get('x-next-cursor');
      } while (cursor);
      expect(seen).toHaveLength(50);
      expect(new Set(seen).size).toBe(50);
    });

    it('lists reviews newest first', async () => {
      const skill = await listSkill();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const buyer = await walletSignIn(fx.request);
        await verifiedPaymentFrom(skill, buyer.wallet.address);
        fx.clock.advance(1);
        ids.push((await json(await review(buyer.token, { skillSlug: skill.slug, score: 3 }))).id);
      }
      expect((await json<any[]>(await reviewsOf(`/skills/${skill.slug}/reviews`))).map((r) => r.id)).toEqual(ids.reverse());
      expect((await reviewsOf(`/skills/${skill.slug}/reviews?cursor=garbage`)).status).toBe(400);
      expect((await fx.request('/skills/no-such-skill/reviews')).status).toBe(404);
    });

    it('answers 400 for a score outside 1–5 or not whole, or a comment over 2,000 characters; 401 without credentials; 404 for an unknown skill', async () => {
      const skill = await listSkill();
      const buyer = await walletSignIn(fx.request);
      await verifiedPaymentFrom(skill, buyer.wallet.address);
      for (const body of [{ score: 0 }, { score: 6 }, { score: 2.5 }, { score: 'five' }, { score: 3, comment: 'x'.repeat(2001) }]) {
        const res = await review(buyer.token, { skillSlug: skill.slug, ...body });
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
      }
      expect((await review(buyer.token, { skillSlug: skill.slug, score: 3, comment: 'x'.repeat(2000) })).status).toBe(201);
      expect((await fx.request('/reviews', jsonPost({ skillSlug: skill.slug, score: 3 }))).status).toBe(401);
      expect((await review(buyer.token, { skillSlug: 'no-such-skill', score: 3 })).status).toBe(404);
    });

    it('lets the skill’s creator reply once; anyone else gets 403, a second reply 409', async () => {
      const skill = await listSkill();
      const buyer = await walletSignIn(fx.request);
      await verifiedPaymentFrom(skill, buyer.wallet.address);
      const { id } = await json(await review(buyer.token, { skillSlug: skill.slug, score: 1, comment: 'Timed out' }));
      const reply = (key: string, comment: string) => fx.request(`/reviews/${id}/reply`, jsonPost({ comment }, bearer(key)));
      const other = await newCreator(fx.request);
      expect((await reply(other.key, 'Not mine')).status).toBe(403);
      const answered = await reply(creator.key, 'Fixed in 1.2, thanks');
      expect(answered.status).toBe(200);
      expect(await json(answered)).toMatchObject({ id, reply: 'Fixed in 1.2, thanks', repliedAt: fx.clock.now().toISOString() });
      expect((await reply(creator.key, 'Again')).status).toBe(409);
      expect((await fx.request(`/reviews/${crypto.randomUUID()}/reply`, jsonPost({ comment: 'x' }, bearer(creator.key)))).status).toBe(404);
    });

    it('sorts by rating: best first, unreviewed last', async () => {
      const rater = await newCreator(fx.request);
      const raterGroup = (await rater.group()).name;
      const make = async () => json(await rater.register({ price: '$0.001', network: chain.network, groups: [raterGroup] }));
      const [good, poor, none] = [await make(), await make(), await make()];
      for (const [skill, score] of [
        [good, 5],
        [poor, 2],
      ] as const) {
        const buyer = await walletSignIn(fx.request);
        await verifiedPaymentFrom({ id: skill.id, payTo: skill.paymentAddress }, buyer.wallet.address);
        expect((await review(buyer.token, { skillSlug: skill.slug, score })).status).toBe(201);
      }
      const order = async (limit: number) => {
        const slugs: string[] = [];
        let cursor: string | null = null;
        do {
          const res: Response = await fx.request(
            `/skills?creator=${rater.address}&sort=rating&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
          );
          slugs.push(...(await json<any[]>(res)).map((s) => s.slug));
          cursor = res.headers.get('x-next-cursor');
        } while (cursor);
        return slugs;
      };
      expect(await order(10)).toEqual([good.slug, poor.slug, none.slug]);
      expect(await order(1)).toEqual([good.slug, poor.slug, none.slug]);
    });
  });
}
