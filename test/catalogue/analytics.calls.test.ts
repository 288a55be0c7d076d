/**
 * `POST /analytics/calls`: a batch of call records from the skills' creator, each checked on its
 * own and all recorded in one transaction, a paymentRef once however often it is sent.
 */
import { beforeAll, describe, expect, it } from 'bun:test';
import { MAX_CALL_BATCH } from 'skill-market/registry';
import { bearer, createKey, jsonPost } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { registryFixture } from '../support/registry';

const ref = (i: number) => `0x${i.toString(16).padStart(64, '0')}`;

for (const kind of databaseKinds) {
  describe(`batched call records on ${kind}`, () => {
    const fx = registryFixture(kind);
    let creator: Creator;
    let other: Creator;
    beforeAll(async () => {
      creator = await newCreator(fx.request);
      other = await newCreator(fx.request);
    });
    const newSkill = async (owner = creator) => json<{ id: string }>(await owner.register());
    const stats = async (skillId: string) => json(await fx.request(`/analytics/${skillId}`));
    const send = (calls: unknown, key = creator.key) => fx.request('/analytics/calls', jsonPost({ calls }, bearer(key)));

    it('counts every record of the caller’s skills and refuses the others one by one, with a reason', async () => {
      const [a, b, foreign] = [await newSkill(), await newSkill(), await newSkill(other)];
      const unknown = crypto.randomUUID();
      const res = await send([
        { skillId: a.id, amount: '0.001' },
        { skillId: foreign.id },
        { skillId: a.id },
        { skillId: b.id, amount: 0.5 },
        { skillId: unknown },
        { skillId: a.id, amount: 'lots' },
        { skillId: a.id },
      ]);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.recorded).toBe(4);
      expect(body.results.map((r: { status: string; reason?: string }) => r.reason ?? r.status)).toEqual([
        'recorded',
        'not-yours',
        'recorded',
        'recorded',
        'unknown-skill',
        'invalid-amount',
        'recorded',
      ]);
      expect(body.results[1].message).toBe('Only the skill’s creator can record its calls');
      expect(body.results[4].message).toBe('Skill not found');
      expect(body.results[5].message).toContain('lots');
      const [sa, sb, sf] = [await stats(a.id), await stats(b.id), await stats(foreign.id)];
      expect([sa.callCount, sb.callCount, sf.callCount]).toEqual([3, 1, 0]);
      expect(sa.daily.at(-1).calls).toBe(3);
      expect(sb.daily.at(-1).calls).toBe(1);
      expect(sa.lastCalledAt).toBe(fx.clock.now().toISOString());
    });

    it('records a paymentRef once within a batch, across re-sent batches and concurrent ones', async () => {
      const skill = await newSkill();
      const calls = [0, 1, 2, 1].map((i) => ({ skillId: skill.id, amount: '0.001', paymentRef: ref(1000 + i) }));
      const first = await json(await send(calls));
      expect(first.results.map((r: { status: string }) => r.status)).toEqual(['recorded', 'recorded', 'recorded', 'duplicate']);
      const again = await json(await send(calls));
      expect(again).toEqual({ success: true, recorded: 0, results: calls.map(() => ({ status: 'duplicate' })) });

      const fresh = Array.from({ length: 30 }, (_, i) => ({ skillId: skill.id, paymentRef: ref(2000 + i) }));
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => send(i % 2 ? [...fresh].reverse() : fresh).then(json)));
      expect(answers.reduce((sum, a) => sum + a.recorded, 0)).toBe(30);
      // Counting waits for the on-chain check of each payment (test/creator/tracking-batch.test.ts).
      expect(await stats(skill.id)).toMatchObject({ callCount: 0, paidCallCount: 0 });
    });

    it('counts concurrent batches of unpaid calls exactly', async () => {
      const skill = await newSkill();
      await Promise.all(Array.from({ length: 10 }, () => send(Array.from({ length: 20 }, () => ({ skillId: skill.id })))));
      expect((await stats(skill.id)).callCount).toBe(200);
    });

    it('answers 400 for an empty, oversized or malformed batch, 401 without and 403 with a consumer key', async () => {
      const skill = await newSkill();
      for (const calls of [[], Array.from({ length: MAX_CALL_BATCH + 1 }, () => ({ skillId: skill.id })), [{ skillId: 'x' }], 'no', [{}]]) {
        const res = await send(calls);
        expect(res.status).toBe(400);
        expect((await json(res)).code).toBe('VALIDATION');
      }
      expect((await fx.request('/analytics/calls', jsonPost({ calls: [{ skillId: skill.id }] }))).status).toBe(401);
      const consumerKey = (await createKey(fx.request, creator.token, 'consumer')).key;
      expect((await send([{ skillId: skill.id }], consumerKey)).status).toBe(403);
      expect((await send(Array.from({ length: MAX_CALL_BATCH }, () => ({ skillId: skill.id })))).status).toBe(200);
      expect((await stats(skill.id)).callCount).toBe(MAX_CALL_BATCH);
    });
  });
}
