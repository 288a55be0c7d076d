/**
 * Reviews in two dialects over one stored 0–100 scale. The other SDK (its requests replayed as it
 * sends them: sign-in with `{address, signature}`, `feedback(slug, 85)` as a bare `fetch` POST of
 * `{skillSlug, score}`, reviews read with a bare `fetch`) writes and reads 0–100; our client
 * (`RegistryClient`, which accepts application/json) writes and reads stars 1–5; a listing's
 * rating is the average in stars.
 */
import { beforeAll, describe, expect, it } from 'bun:test';
import type { PrivateKeyAccount } from 'viem';
import { RegistryClient } from 'skill-market/registry';
import { paymentVerifications } from '../../src/db/schema';
import { newWallet, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { oneDatabase } from '../support/database';
import { registryFixture } from '../support/registry';

for (const kind of oneDatabase) {
  describe(`review dialects on ${kind}`, () => {
    const fx = registryFixture(kind);
    let creator: Creator;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
    });

    const listSkill = async () => json<{ id: string; slug: string; paymentAddress: string; network: string }>(await creator.register());
    const paidBy = (skill: { id: string; paymentAddress: string; network: string }, payer: string) =>
      fx.database.db.insert(paymentVerifications).values({
        skillId: skill.id,
        txHash: `0x${crypto.randomUUID().replaceAll('-', '').padEnd(64, 'e')}`,
        status: 'verified',
        expectedAmount: 1000n,
        payTo: skill.paymentAddress,
        network: skill.network,
        payer,
        amount: 1000n,
        nextAttemptAt: fx.clock.now(),
        createdAt: fx.clock.now(),
        decidedAt: fx.clock.now(),
      });

    /** What the other SDK sends: its sign-in, `feedback(slug, score)` and `getReviews(slug)`, header for header. */
    const otherSdk = (wallet: PrivateKeyAccount) => {
      let token: string | undefined;
      const authenticate = async () => {
        const challenge = await fx.request('/auth/challenge', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ address: wallet.address }),
        });
        const { message } = await json<{ message: string }>(challenge);
        const verified = await fx.request('/auth/verify', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ address: wallet.address, signature: await wallet.signMessage({ message }) }),
        });
        token = (await json<{ token: string }>(verified)).token;
      };
      return {
        async feedback(slug: string, score: number, comment?: string): Promise<Response> {
          if (!token) await authenticate();
          return fx.request('/reviews', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
            body: JSON.stringify({ skillSlug: slug, score, comment }),
          });
        },
        getReviews: async (slug: string) => json<{ score: number; consumerAddress: string }[]>(await fx.request(`/skills/${slug}/reviews`)),
      };
    };
    /** Our SDK's registry client, signed in as `token`, over the registry in process. */
    const ourClient = (token: string) =>
      new RegistryClient({
        apiUrl: 'http://localhost',
        apiKey: token,
        fetch: (input, init) => {
          const url = new URL(String(input));
          return fx.request(`${url.pathname}${url.search}`, init);
        },
      });

    it('stores the other SDK’s 85 as 85, reads it back as 85 there and as 4 stars in ours; the listing rates it 4.25 stars', async () => {
      const skill = await listSkill();
      const wallet = newWallet();
      await paidBy(skill, wallet.address);
      const sdk = otherSdk(wallet);
      const posted = await sdk.feedback(skill.slug, 85);
      expect(posted.status).toBe(201);
      expect(await json(posted)).toMatchObject({ score: 85, consumerAddress: wallet.address });
      expect((await sdk.getReviews(skill.slug)).map((r) => r.score)).toEqual([85]);

      const reader = await walletSignIn(fx.request);
      const ours = await ourClient(reader.token).reviews(skill.slug);
      expect(ours.items.map((r) => r.score)).toEqual([4]);
      expect((await ourClient(reader.token).skill(skill.slug)).rating).toBe(4.25);
    });

    it('takes our client’s stars as stars: 4 stars read as 80 by the other SDK; 0 and 100 are the other SDK’s bounds', async () => {
      const skill = await listSkill();
      const buyer = await walletSignIn(fx.request);
      await paidBy(skill, buyer.wallet.address);
      const { review, created } = await ourClient(buyer.token).postReview({ skillSlug: skill.slug, score: 4, comment: 'Quick' });
      expect({ score: review.score, created }).toEqual({ score: 4, created: true });
      expect((await otherSdk(newWallet()).getReviews(skill.slug)).map((r) => r.score)).toEqual([80]);
      expect((await ourClient(buyer.token).skill(skill.slug)).rating).toBe(4);

      const other = newWallet();
      await paidBy(skill, other.address);
      const sdk = otherSdk(other);
      expect((await sdk.feedback(skill.slug, 0)).status).toBe(201);
      expect((await sdk.feedback(skill.slug, 100)).status).toBe(200);
      const refused = await sdk.feedback(skill.slug, 101);
      expect(refused.status).toBe(400);
      expect((await ourClient(buyer.token).skill(skill.slug)).rating).toBe(4.5);
    });

    it('refuses stars outside 1–5 from our client, naming the scale', async () => {
      const skill = await listSkill();
      const buyer = await walletSignIn(fx.request);
      await paidBy(skill, buyer.wallet.address);
      const res = await fx.request('/reviews', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${buyer.token}` },
        body: JSON.stringify({ skillSlug: skill.slug, score: 85 }),
      });
      expect(res.status).toBe(400);
      expect((await json(res)).error).toBe('Invalid request: field "score": must be a whole number of stars from 1 to 5');
    });
  });
}
