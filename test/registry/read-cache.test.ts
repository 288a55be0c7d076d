import { describe, expect, it } from 'bun:test';
import type { SkillView } from 'skill-market/registry';
import { ReadCache } from '../../src/registry/cache/read-cache';
import type { ObservedFields } from '../../src/registry/modules/skills/view';
import { manualClock } from '../support/registry';

/** The cache's own rules, with a database stood in by counters in memory (the end-to-end tests are test/catalogue/read-cache.test.ts). */
function setup() {
  const clock = manualClock();
  const views = new Map<string, number>();
  const observed: string[][] = [];
  const cache = new ReadCache({
    maxAgeMs: 1000,
    clock,
    observe: async (ids) => {
      observed.push([...ids].sort());
      return new Map(ids.filter((id) => views.has(id)).map((id) => [id, { ...fields, viewCount: views.get(id)! } as ObservedFields]));
    },
  });
  let loads = 0;
  const skill = (n: number): SkillView => {
    views.set(`id-${n}`, views.get(`id-${n}`) ?? 0);
    return { ...fields, id: `id-${n}`, slug: `s-${n}`, viewCount: views.get(`id-${n}`)! } as unknown as SkillView;
  };
  const listing = async (n: number) => {
    const answer = await cache.listing(`s-${n}`, async () => {
      loads++;
      return skill(n);
    });
    return JSON.parse(answer.body) as SkillView;
  };
  return { clock, views, observed, cache, listing, loads: () => loads, skill };
}

const fields: ObservedFields = {
  callCount: 0,
  paidCallCount: 0,
  trialCallCount: 0,
  buyerCount: 0,
  repeatBuyerCount: 0,
  viewCount: 0,
  favoriteCount: 0,
  rating: null,
  reviewCount: 0,
  totalRevenueAtomic: '0',
  totalRevenue: '0',
  status: 'unknown',
  latencyMs: null,
  lastUpAt: null,
  uptime: null,
  recentSuccessRate: null,
};

describe('read cache', () => {
  it('loads a listing once for many concurrent requests', async () => {
    const t = setup();
    await Promise.all(Array.from({ length: 20 }, () => t.listing(1)));
    expect(t.loads()).toBe(1);
  });

  it('re-reads the counters of every listing in use in one statement, and never serves them older than the bound', async () => {
    const t = setup();
    for (let n = 0; n < 50; n++) await t.listing(n);
    for (let n = 0; n < 50; n++) t.views.set(`id-${n}`, n + 1);
    t.clock.advance(0.4);
    expect((await t.listing(7)).viewCount).toBe(0); // young: served as is, nothing read
    expect(t.observed).toHaveLength(0);
    t.clock.advance(0.6);
    expect((await t.listing(7)).viewCount).toBe(8); // 1 s old: re-read before answering
    expect(t.observed).toEqual([Array.from({ length: 50 }, (_, n) => `id-${n}`).sort()]);
    for (let n = 0; n < 50; n++) expect((await t.listing(n)).viewCount).toBe(n + 1);
    expect(t.observed).toHaveLength(1);
    expect(t.loads()).toBe(50);
  });

  it('drops a listing whose skill is gone at the re-read, and reloads it', async () => {
    const t = setup();
    await t.listing(1);
    t.views.delete('id-1');
    t.clock.advance(1);
    await t.listing(1);
    expect(t.loads()).toBe(2);
  });

  it('reloads content at most every 10 s even without a change notice (one missed, a replica that lagged)', async () => {
    const t = setup();
    await t.listing(1);
    t.clock.advance(9.9);
    await t.listing(1); // counters re-read, content kept
    expect(t.loads()).toBe(1);
    t.clock.advance(0.1);
    await t.listing(1);
    expect(t.loads()).toBe(2);
  });

  it('does not keep a load that overlaps a change', async () => {
    const t = setup();
    let release!: () => void;
    const slow = t.cache.listing('s-9', async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      return t.skill(9);
    });
    t.cache.skillChanged('id-9');
    release();
    await slow;
    await t.listing(9);
    expect(t.loads()).toBe(1); // the slow load is not counted by `listing`, which loaded again
  });

  it('builds a search page from the current listings and keeps its choice until a change', async () => {
    const t = setup();
    let searches = 0;
    const page = async () =>
      JSON.parse(
        (
          await t.cache.search('/skills?q=x', false, async () => {
            searches++;
            return { skills: [t.skill(1), t.skill(2)], headers: {} };
          })
        ).body,
      ) as SkillView[];
    expect((await page()).map((s) => s.viewCount)).toEqual([0, 0]);
    t.views.set('id-2', 5);
    t.clock.advance(1);
    expect((await page()).map((s) => s.viewCount)).toEqual([0, 5]);
    expect(searches).toBe(1);
    t.cache.skillChanged('id-1');
    await page();
    expect(searches).toBe(2);
  });
});
