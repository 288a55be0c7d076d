/**
 * Paging through reports: the operators' queue (open oldest first, closed most recently closed
 * first) and a reporter's own reports (newest first, with their status and outcome but never the
 * operator's reason) page by keyset cursors the way the audit log does: X-Next-Cursor and a Link
 * to the next page, every report once across the pages, also among reports filed in the same
 * millisecond; a cursor the registry did not issue is a 400.
 */
import { beforeAll, describe, expect, it } from 'bun:test';
import { bearer, jsonPost, newWallet, walletSignIn } from '../support/auth';
import { json, newCreator, type Creator } from '../support/catalogue';
import { databaseKinds } from '../support/database';
import { registryFixture } from '../support/registry';

interface Report {
  id: string;
  skillSlug: string | null;
  status: string;
  createdAt: string;
  closedAt: string | null;
}

const byId = (a: Report, b: Report) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
/** Oldest first (the open queue), newest first (a reporter's list); reports of the same instant by id either way. */
const oldestFirst = <R extends Report>(list: R[]) =>
  [...list].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || byId(a, b));
const newestFirst = <R extends Report>(list: R[]) =>
  [...list].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || byId(a, b));

for (const kind of databaseKinds) {
  describe(`report pages on ${kind}`, () => {
    const operatorWallet = newWallet();
    const fx = registryFixture(kind, { moderation: { operators: [operatorWallet.address], reportsPerHour: 50 } });
    let operator: string;
    let creator: Creator;
    let alice: string;
    let bob: string;
    const slugs: string[] = [];
    /** Report ids in the order they were filed. */
    const filed: { id: string; by: 'alice' | 'bob' }[] = [];

    const get = (path: string, token: string) => fx.request(path, { headers: bearer(token) });
    /** Every page of `path` (limit `size`), following X-Next-Cursor; checks each Link names the next page. */
    async function allPages<T>(path: string, token: string, size: number): Promise<{ items: T[]; pages: number }> {
      const items: T[] = [];
      let pages = 0;
      let cursor: string | undefined;
      do {
        const sep = path.includes('?') ? '&' : '?';
        const res = await get(`${path}${sep}limit=${size}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
        expect(res.status).toBe(200);
        const page = await json<T[]>(res);
        expect(page.length).toBeLessThanOrEqual(size);
        items.push(...page);
        pages++;
        cursor = res.headers.get('x-next-cursor') ?? undefined;
        if (cursor) {
          expect(page.length).toBe(size);
          const link = res.headers.get('link') ?? '';
          expect(link).toContain(`cursor=${encodeURIComponent(cursor)}`);
          expect(link).toContain(path.split('?')[0]!);
          expect(link).toEndWith('; rel="next"');
        } else expect(res.headers.get('link')).toBeNull();
      } while (cursor && pages < 20);
      return { items, pages };
    }

    beforeAll(async () => {
      operator = (await walletSignIn(fx.request, operatorWallet)).token;
      creator = await newCreator(fx.request);
      alice = (await walletSignIn(fx.request)).token;
      bob = (await walletSignIn(fx.request)).token;
      for (let i = 0; i < 3; i++) {
        const res = await creator.register({ name: `paged-${i}-${crypto.randomUUID().slice(0, 6)}` });
        expect(res.status).toBe(201);
        slugs.push((await json<{ slug: string }>(res)).slug);
      }
      // Seven reports: some in the same millisecond (the manual clock stands still), some a second apart.
      const file = async (by: 'alice' | 'bob', body: Record<string, unknown>) => {
        const res = await fx.request(
          '/reports',
          jsonPost({ category: 'spam', text: `report ${filed.length}`, ...body }, bearer(by === 'alice' ? alice : bob)),
        );
        expect(res.status).toBe(201);
        filed.push({ id: (await json<{ id: string }>(res)).id, by });
      };
      await file('alice', { skillSlug: slugs[0] });
      await file('alice', { skillSlug: slugs[1] });
      await file('bob', { skillSlug: slugs[0] });
      fx.clock.advance(1);
      await file('alice', { skillSlug: slugs[2] });
      await file('bob', { skillSlug: slugs[1] });
      fx.clock.advance(1);
      await file('alice', { creatorAddress: creator.address });
      await file('bob', { skillSlug: slugs[2] });
    }, 60_000);

    it('pages the open queue oldest first, each report once, in the order of one long page', async () => {
      const whole = await json<{ report: Report }[]>(await get('/operator/reports?limit=100', operator));
      expect(whole).toHaveLength(7);
      const { items, pages } = await allPages<{ report: Report }>('/operator/reports', operator, 3);
      expect(pages).toBe(3);
      expect(items.map((i) => i.report.id)).toEqual(whole.map((i) => i.report.id));
      expect(new Set(items.map((i) => i.report.id)).size).toBe(7);
      const reports = items.map((i) => i.report);
      expect(reports.map((r) => r.id)).toEqual(oldestFirst(reports).map((r) => r.id));
      expect(new Set(items.map((i) => i.report.id))).toEqual(new Set(filed.map((f) => f.id)));
    });

    it('pages the closed reports most recently closed first, and the open ones without them', async () => {
      // Three closed a second apart: dismissed, hidden (the skill hidden for it), dismissed.
      const dismiss = (id: string) =>
        fx.request(`/operator/reports/${id}/dismiss`, jsonPost({ reason: 'not spam, private note' }, bearer(operator)));
      expect((await dismiss(filed[0]!.id)).status).toBe(200);
      fx.clock.advance(1);
      const hide = await fx.request(
        `/operator/skills/${slugs[1]}/hide`,
        jsonPost({ reason: 'copies another listing, told to the creator', reportId: filed[1]!.id }, bearer(operator)),
      );
      expect(hide.status).toBe(200);
      fx.clock.advance(1);
      expect((await dismiss(filed[2]!.id)).status).toBe(200);

      const closed = await allPages<{ report: Report }>('/operator/reports?status=closed', operator, 2);
      expect(closed.pages).toBe(2);
      expect(closed.items.map((i) => i.report.id)).toEqual([filed[2]!.id, filed[1]!.id, filed[0]!.id]);
      expect(closed.items.map((i) => i.report.status)).toEqual(['dismissed', 'actioned', 'dismissed']);
      const open = await allPages<{ report: Report }>('/operator/reports?status=open', operator, 2);
      const whole = await json<{ report: Report }[]>(await get('/operator/reports?status=open&limit=100', operator));
      expect(open.items.map((i) => i.report.id)).toEqual(whole.map((i) => i.report.id));
      expect(new Set(open.items.map((i) => i.report.id))).toEqual(new Set(filed.slice(3).map((f) => f.id)));
    });

    it('answers 400 to a cursor it did not issue, with the error shape', async () => {
      for (const cursor of ['not-a-cursor', Buffer.from(JSON.stringify(['yesterday', crypto.randomUUID()])).toString('base64url')]) {
        const res = await get(`/operator/reports?cursor=${cursor}`, operator);
        expect(res.status).toBe(400);
        expect(await json(res)).toMatchObject({
          code: 'VALIDATION',
          error: 'Invalid request: field "cursor": not a cursor this registry issued',
        });
        expect((await get(`/reports/mine?cursor=${cursor}`, alice)).status).toBe(400);
      }
    });

    it("shows a reporter their own reports newest first, with status and outcome, never the operator's reason", async () => {
      const res = await get('/reports/mine?limit=100', alice);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain('private note');
      expect(text).not.toContain('told to the creator');
      expect(text.toLowerCase()).not.toContain(operatorWallet.address.toLowerCase());
      const mine = JSON.parse(text) as (Report & { outcome: string | null })[];
      const aliceIds = filed.filter((f) => f.by === 'alice').map((f) => f.id);
      expect(mine.map((r) => r.id)).toEqual(newestFirst(mine).map((r) => r.id));
      expect(new Set(mine.map((r) => r.id))).toEqual(new Set(aliceIds));
      const byId = new Map(mine.map((r) => [r.id, r]));
      expect(byId.get(filed[0]!.id)).toMatchObject({ status: 'dismissed', outcome: 'report.dismiss', skillSlug: slugs[0] });
      expect(byId.get(filed[1]!.id)).toMatchObject({ status: 'actioned', outcome: 'skill.hide', skillSlug: slugs[1] });
      expect(byId.get(filed[1]!.id)!.closedAt).not.toBeNull();
      expect(byId.get(filed[3]!.id)).toMatchObject({ status: 'open', outcome: null, closedAt: null });
      expect(byId.get(filed[5]!.id)).toMatchObject({ skillSlug: null, creatorAddress: creator.address, outcome: null });

      const paged = await allPages<Report>('/reports/mine', alice, 3);
      expect(paged.pages).toBe(2);
      expect(paged.items.map((r) => r.id)).toEqual(mine.map((r) => r.id));
      const bobs = await json<Report[]>(await get('/reports/mine', bob));
      expect(bobs.map((r) => r.id)).toEqual(newestFirst(bobs).map((r) => r.id));
      expect(new Set(bobs.map((r) => r.id))).toEqual(new Set(filed.filter((f) => f.by === 'bob').map((f) => f.id)));
      expect(await json(await get('/reports/mine', creator.token))).toEqual([]);
      expect((await fx.request('/reports/mine')).status).toBe(401);
    });
  });
}
