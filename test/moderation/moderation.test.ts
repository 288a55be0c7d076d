/**
 * Reports and moderation over HTTP: any signed-in account reports (one open report per skill,
 * rate-limited); the operators (OPERATOR_ADDRESSES) alone read the queue, hide skills, suspend
 * creators and undo either, each with a reason, each an entry of the append-only audit log.
 * Hidden means gone from every public listing while the counters stay; the creator sees why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { moderationActions, skillStats, webhookDeliveries } from '../../src/db/schema';
import { readHealthConfig } from '../../src/config/health';
import { createWebhookDeliverer } from '../../src/registry/modules/webhooks';
import { systemClock } from '../../src/registry/context';
import { bearer, jsonPost, newWallet, walletSignIn } from '../support/auth';
import { json, newCreator, skillInput, type Creator } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { memoryLogger, registryFixture } from '../support/registry';
import { webhookReceiver } from '../support/webhooks';

const REPORTS_PER_HOUR = 3;

for (const kind of databaseKinds) {
  describe(`moderation on ${kind}`, () => {
    const operatorWallet = newWallet();
    const fx = registryFixture(kind, {
      moderation: { operators: [operatorWallet.address], reportsPerHour: REPORTS_PER_HOUR },
      health: readHealthConfig({ MARKET_HEALTH_ALLOW_PRIVATE: 'true' }, 'test'),
    });
    let operator: string;
    let creator: Creator;
    let reporter: { token: string };
    const received: { type: string; data: Record<string, unknown> }[] = [];
    const sink = webhookReceiver(async (request) => {
      received.push((await request.json()) as { type: string; data: Record<string, unknown> });
      return new Response('ok');
    });
    afterAll(() => sink.stop());

    beforeAll(async () => {
      operator = (await walletSignIn(fx.request, operatorWallet)).token;
      creator = await newCreator(fx.request);
      reporter = await walletSignIn(fx.request);
      const hook = await fx.request(
        '/webhooks',
        jsonPost(
          { url: sink.url, events: ['skill.hidden', 'skill.restored', 'creator.suspended', 'creator.restored'] },
          bearer(creator.token),
        ),
      );
      expect(hook.status).toBe(201);
    }, 60_000);

    const listSkill = async (who: Creator = creator, name = `tool-${crypto.randomUUID().slice(0, 8)}`) => {
      const res = await who.register({ name, description: `moderation probe ${name}` });
      expect(res.status).toBe(201);
      return json<{ id: string; slug: string; name: string; endpoint: string }>(res);
    };
    const act = (token: string, path: string, body: Record<string, unknown>) => fx.request(path, jsonPost(body, bearer(token)));
    const report = (token: string, body: Record<string, unknown>) => act(token, '/reports', body);
    const searchSlugs = async (q = '') =>
      (await json<{ slug: string }[]>(await fx.request(`/skills?limit=100${q ? `&q=${encodeURIComponent(q)}` : ''}`))).map((s) => s.slug);
    const resources = async () =>
      (await json<{ items: { resource: string }[] }>(await fx.request('/discovery/resources?limit=100'))).items.map((i) => i.resource);
    const creatorPage = async (address: string) =>
      (await json<{ skills: { slug: string }[] }>(await fx.request(`/creators/${address}`))).skills.map((s) => s.slug);
    const deliver = () =>
      createWebhookDeliverer({
        db: fx.database.db,
        clock: systemClock,
        logger: memoryLogger().logger,
        allowPrivateAddresses: true,
        timeoutMs: 5000,
      }).deliverDue();

    it('answers 403 to a signed-in account that is no operator, on every operator route', async () => {
      const skill = await listSkill();
      const someone = reporter.token;
      const reason = { reason: 'because' };
      const answers = await Promise.all([
        fx.request('/operator/reports', { headers: bearer(someone) }),
        fx.request('/operator/audit', { headers: bearer(someone) }),
        fx.request('/operator/audit/export', { headers: bearer(someone) }),
        act(someone, `/operator/skills/${skill.slug}/hide`, reason),
        act(someone, `/operator/skills/${skill.slug}/restore`, reason),
        act(someone, `/operator/creators/${creator.address}/suspend`, reason),
        act(someone, `/operator/creators/${creator.address}/restore`, reason),
        act(someone, `/operator/reports/${crypto.randomUUID()}/dismiss`, reason),
        // The operator's own API key: operators act with a signed-in session only.
        fx.request('/operator/reports', { headers: bearer(creator.key) }),
      ]);
      for (const res of answers) expect(res.status).toBe(403);
      const body = await json(answers[0]!);
      expect(body).toMatchObject({ error: 'Only the marketplace’s operators can do this', code: 'FORBIDDEN' });
      expect(typeof body.requestId).toBe('string');
      expect((await fx.request('/operator/reports')).status).toBe(401);
      const standing = await json(await fx.request('/moderation/me', { headers: bearer(operator) }));
      expect(standing).toEqual({ operator: true, suspended: null, hiddenSkills: [] });
    });

    let limitedReporter: { wallet: ReturnType<typeof newWallet>; slug: string };
    it('takes a report, refuses a second open one of the same skill (409) and more than the hourly limit (429)', async () => {
      const account = await walletSignIn(fx.request);
      const skills = await Promise.all([listSkill(), listSkill(), listSkill(), listSkill()]);
      const first = await report(account.token, {
        skillSlug: skills[0]!.slug,
        category: 'scam',
        text: '  Takes the money, answers nothing  ',
      });
      expect(first.status).toBe(201);
      expect(await json(first)).toMatchObject({
        skillSlug: skills[0]!.slug,
        creatorAddress: creator.address,
        category: 'scam',
        text: 'Takes the money, answers nothing',
        status: 'open',
        closedAt: null,
      });
      const again = await report(account.token, { skillSlug: skills[0]!.slug, category: 'spam', text: 'again' });
      expect(again.status).toBe(409);
      expect((await json(again)).code).toBe('CONFLICT');
      expect((await report(account.token, { skillSlug: skills[1]!.slug, category: 'spam', text: 'x' })).status).toBe(201);
      expect((await report(account.token, { creatorAddress: creator.address, category: 'other', text: 'y' })).status).toBe(201);
      const limited = await report(account.token, { skillSlug: skills[2]!.slug, category: 'spam', text: 'z' });
      expect(limited.status).toBe(429);
      expect((await json(limited)).error).toBe(`Too many reports: at most ${REPORTS_PER_HOUR} an hour; try again later`);
      limitedReporter = { wallet: account.wallet, slug: skills[2]!.slug };
    });

    it('refuses bad reports with a clear 4xx: no target, two targets, unknown skill, an API key, no credential', async () => {
      const skill = await listSkill();
      const account = await walletSignIn(fx.request);
      const cases: [Record<string, unknown>, number][] = [
        [{ category: 'spam', text: 'x' }, 400],
        [{ skillSlug: skill.slug, creatorAddress: creator.address, category: 'spam', text: 'x' }, 400],
        [{ skillSlug: skill.slug, category: 'nonsense', text: 'x' }, 400],
        [{ skillSlug: skill.slug, category: 'spam', text: '   ' }, 400],
        [{ skillSlug: 'no-such-skill', category: 'spam', text: 'x' }, 404],
        [{ creatorAddress: newWallet().address, category: 'spam', text: 'x' }, 404],
      ];
      for (const [body, status] of cases) expect((await report(account.token, body)).status).toBe(status);
      expect((await report(creator.key, { skillSlug: skill.slug, category: 'spam', text: 'x' })).status).toBe(403);
      expect((await fx.request('/reports', jsonPost({ skillSlug: skill.slug, category: 'spam', text: 'x' }))).status).toBe(401);
    });

    it('hides a reported skill with a reason: gone from every listing, a clear 404, the creator told; undo lists it again', async () => {
      const skill = await listSkill(creator, `hideable-${crypto.randomUUID().slice(0, 6)}`);
      const account = await walletSignIn(fx.request);
      await fx.database.db
        .update(skillStats)
        .set({ callCount: 7, paidCallCount: 5, buyerCount: 2, totalRevenue: 5000n })
        .where(eq(skillStats.skillId, skill.id));
      const filed = await json(
        await report(account.token, { skillSlug: skill.slug, category: 'malware', text: 'It asks for private keys' }),
      );
      expect(await searchSlugs()).toContain(skill.slug);
      expect(await resources()).toContain(skill.endpoint);
      const favourite = await fx.request('/analytics/favorite', jsonPost({ skillId: skill.id, action: 'add' }, bearer(account.token)));
      expect(favourite.status).toBe(200);
      const favourites = async () =>
        (await json<{ slug: string }[]>(await fx.request('/analytics/favorites', { headers: bearer(account.token) }))).map((s) => s.slug);
      expect(await favourites()).toEqual([skill.slug]);

      const queue = await json<any[]>(await fx.request('/operator/reports', { headers: bearer(operator) }));
      const item = queue.find((q) => q.report.id === filed.id);
      expect(item).toMatchObject({
        report: { skillSlug: skill.slug, category: 'malware', text: 'It asks for private keys', status: 'open' },
        skill: { slug: skill.slug, hidden: null, status: 'unknown', buyerCount: 2, paidCallCount: 5 },
        creator: { address: creator.address, suspended: null },
        actions: [],
      });

      expect((await act(operator, `/operator/skills/${skill.slug}/hide`, { reason: '  ' })).status).toBe(400);
      const hidden = await act(operator, `/operator/skills/${skill.slug}/hide`, { reason: 'Phishes for keys', reportId: filed.id });
      expect(hidden.status).toBe(200);
      const entry = await json(hidden);
      expect(entry).toMatchObject({
        action: 'skill.hide',
        targetType: 'skill',
        targetId: skill.id,
        targetLabel: skill.slug,
        reason: 'Phishes for keys',
        reportId: filed.id,
        operatorAddress: operatorWallet.address,
      });
      expect((await act(operator, `/operator/skills/${skill.slug}/hide`, { reason: 'again' })).status).toBe(409);

      // Gone from /skills, search, discovery and the creator's page; the page is a 404 that says why.
      expect(await searchSlugs()).not.toContain(skill.slug);
      expect(await searchSlugs('hideable')).not.toContain(skill.slug);
      expect(await resources()).not.toContain(skill.endpoint);
      expect(await creatorPage(creator.address)).not.toContain(skill.slug);
      expect(await favourites()).toEqual([]);
      const page = await fx.request(`/skills/${skill.slug}`);
      expect(page.status).toBe(404);
      expect(await json(page)).toMatchObject({ error: 'This skill is hidden by the marketplace’s operators', code: 'NOT_FOUND' });
      expect((await fx.request(`/skills/${skill.slug}`, { headers: bearer(account.token) })).status).toBe(404);

      // Its creator (and the operators) still read it, with the reason; the counters stay.
      const own = await json(await fx.request(`/skills/${skill.slug}`, { headers: bearer(creator.token) }));
      expect(own).toMatchObject({ slug: skill.slug, callCount: 7, paidCallCount: 5, buyerCount: 2, totalRevenueAtomic: '5000' });
      expect((await fx.request(`/skills/${skill.slug}`, { headers: bearer(operator) })).status).toBe(200);
      const standing = await json(await fx.request('/moderation/me', { headers: bearer(creator.key) }));
      expect(standing.hiddenSkills).toContainEqual({ slug: skill.slug, name: skill.name, reason: 'Phishes for keys', at: entry.createdAt });
      const mine = await json<any[]>(await fx.request('/creators/me/skills', { headers: bearer(creator.key) }));
      expect(mine.map((s) => s.slug)).toContain(skill.slug);

      // The report is closed as actioned; the creator's webhook hears of it.
      const closed = await json<any[]>(await fx.request('/operator/reports?status=closed', { headers: bearer(operator) }));
      expect(closed.find((q) => q.report.id === filed.id)?.report.status).toBe('actioned');
      const queued = await fx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'skill.hidden'));
      expect(queued.length).toBeGreaterThanOrEqual(1);
      await deliver();
      expect(received).toContainEqual({
        type: 'skill.hidden',
        timestamp: entry.createdAt,
        data: { version: 1, skill: skill.slug, reason: 'Phishes for keys' },
      } as never);

      // Undo: listed again, the log has both entries, newest first, and the queue shows them.
      const restored = await act(operator, `/operator/skills/${skill.slug}/restore`, { reason: 'Fixed: no longer asks for keys' });
      expect(restored.status).toBe(200);
      expect(await searchSlugs('hideable')).toContain(skill.slug);
      expect(await resources()).toContain(skill.endpoint);
      expect((await fx.request(`/skills/${skill.slug}`)).status).toBe(200);
      expect((await json(await fx.request(`/skills/${skill.slug}`))).paidCallCount).toBe(5);
      expect(await favourites()).toEqual([skill.slug]);
      const log = await json<any[]>(await fx.request('/operator/audit?limit=2', { headers: bearer(operator) }));
      expect(log.map((e) => [e.action, e.targetId])).toEqual([
        ['skill.restore', skill.id],
        ['skill.hide', skill.id],
      ]);
      expect((await act(operator, `/operator/skills/${skill.slug}/restore`, { reason: 'again' })).status).toBe(409);
      expect((await act(operator, '/operator/skills/no-such-skill/hide', { reason: 'x' })).status).toBe(404);
      await deliver();
      expect(received.map((e) => e.type)).toContain('skill.restored');
    });

    it('suspends a creator: every skill hidden, writes refused 403 with the reason, sign-in and reads still work; undo restores', async () => {
      const wallet = newWallet();
      const target = await newCreator(fx.request, wallet);
      const skills = await Promise.all([listSkill(target), listSkill(target)]);
      const group = (await target.group()).name;
      expect(await creatorPage(target.address)).toHaveLength(2);

      const suspended = await act(operator, `/operator/creators/${target.address.toLowerCase()}/suspend`, { reason: 'Spam listings' });
      expect(suspended.status).toBe(200);
      expect(await json(suspended)).toMatchObject({ action: 'creator.suspend', targetType: 'creator', targetLabel: target.address });
      expect((await act(operator, `/operator/creators/${target.address}/suspend`, { reason: 'again' })).status).toBe(409);

      const all = await searchSlugs();
      for (const s of skills) {
        expect(all).not.toContain(s.slug);
        expect((await fx.request(`/skills/${s.slug}`)).status).toBe(404);
      }
      expect(await resources()).not.toContain(skills[0]!.endpoint);
      expect(await creatorPage(target.address)).toEqual([]);

      // Writes with the creator key and with the session: 403 with the reason.
      const registration = (name: string) =>
        fx.request('/skills', jsonPost(skillInput({ name, paymentAddress: target.address, groups: [group] }), bearer(target.key)));
      const write = await registration('one-more');
      expect(write.status).toBe(403);
      expect(await json(write)).toMatchObject({
        error: 'This account is suspended by the marketplace’s operators: Spam listings',
        code: 'FORBIDDEN',
      });
      const patch = await fx.request(`/skills/${skills[0]!.slug}`, {
        method: 'PATCH',
        headers: { ...bearer(target.token), 'content-type': 'application/json' },
        body: JSON.stringify({ description: 'changed' }),
      });
      expect(patch.status).toBe(403);
      // Reads, sign-in, and reading why still work.
      expect((await fx.request('/creators/me/skills', { headers: bearer(target.key) })).status).toBe(200);
      expect((await fx.request(`/skills/${skills[0]!.slug}`, { headers: bearer(target.key) })).status).toBe(200);
      const signedIn = await walletSignIn(fx.request, wallet);
      expect(signedIn.token).toBeTruthy();
      const standing = await json(await fx.request('/moderation/me', { headers: bearer(target.token) }));
      expect(standing.suspended).toMatchObject({ reason: 'Spam listings' });

      await deliver();
      const restored = await act(operator, `/operator/creators/${target.address}/restore`, { reason: 'Appeal accepted' });
      expect(restored.status).toBe(200);
      expect(await creatorPage(target.address)).toHaveLength(2);
      expect((await registration('one-more')).status).toBe(201);
      expect((await act(operator, `/operator/creators/${newWallet().address}/suspend`, { reason: 'x' })).status).toBe(404);
    });

    it('exports the audit log whole, oldest first, as CSV and as JSON lines; the database refuses to change it', async () => {
      const skill = await listSkill();
      await act(operator, `/operator/skills/${skill.slug}/hide`, { reason: 'Says "free", charges, then: =cmd' });
      const csv = await fx.request('/operator/audit/export?format=csv', { headers: bearer(operator) });
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(csv.headers.get('content-disposition')).toBe('attachment; filename="moderation-audit.csv"');
      const lines = (await csv.text()).trimEnd().split('\n');
      expect(lines[0]).toBe('seq,created_at,operator_address,action,target_type,target_id,target_label,reason,report_id');
      const [count] = await fx.database.db.select({ n: sql<number>`count(*)::int` }).from(moderationActions);
      expect(lines).toHaveLength(count!.n + 1);
      expect(lines.at(-1)).toContain(`,skill.hide,skill,${skill.id},${skill.slug},"Says ""free"", charges, then: =cmd",`);
      const jsonl = await fx.request('/operator/audit/export?format=jsonl', { headers: bearer(operator) });
      const entries = (await jsonl.text())
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(entries.map((e) => e.seq)).toEqual([...entries.map((e) => e.seq)].sort((a, b) => a - b));
      expect(entries.at(-1)).toMatchObject({ action: 'skill.hide', targetId: skill.id, reason: 'Says "free", charges, then: =cmd' });
      expect((await fx.request('/operator/audit/export?format=xml', { headers: bearer(operator) })).status).toBe(400);

      const refused = async (statement: ReturnType<typeof sql>) => {
        const error = await fx.database.db.execute(statement).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(String((error as { cause?: unknown })?.cause ?? error)).toContain('append-only');
      };
      await refused(sql`update moderation_actions set reason = 'rewritten'`);
      await refused(sql`delete from moderation_actions`);
      await refused(sql`truncate moderation_actions`);
      const after = await fx.request('/operator/audit/export?format=jsonl', { headers: bearer(operator) });
      expect((await after.text()).trimEnd().split('\n')).toHaveLength(entries.length);
    });

    it('dismisses a report with a reason, once', async () => {
      const skill = await listSkill();
      const account = await walletSignIn(fx.request);
      const filed = await json(await report(account.token, { skillSlug: skill.slug, category: 'broken', text: 'Answers 500' }));
      const dismissed = await act(operator, `/operator/reports/${filed.id}/dismiss`, { reason: 'It answers now' });
      expect(dismissed.status).toBe(200);
      expect(await json(dismissed)).toMatchObject({
        action: 'report.dismiss',
        targetType: 'report',
        targetId: filed.id,
        reportId: filed.id,
      });
      expect((await act(operator, `/operator/reports/${filed.id}/dismiss`, { reason: 'again' })).status).toBe(409);
      expect((await act(operator, `/operator/reports/${crypto.randomUUID()}/dismiss`, { reason: 'x' })).status).toBe(404);
      // Closed, the reporter may report the skill again.
      expect((await report(account.token, { skillSlug: skill.slug, category: 'broken', text: 'Down again' })).status).toBe(201);
    });

    // Last: it moves the clock past every session's access token.
    it('lets the reporter report again an hour later', async () => {
      fx.clock.advance(3601);
      const again = await walletSignIn(fx.request, limitedReporter.wallet);
      expect((await report(again.token, { skillSlug: limitedReporter.slug, category: 'spam', text: 'z' })).status).toBe(201);
    });
  });
}
