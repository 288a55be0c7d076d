/**
 * The skill server's plans store (free trial calls and paid calls for volume prices): counts kept
 * across a reopening, a given-back trial call counted once, the journal compacted to one line per
 * wallet and period both at opening and once it grows past its limit, and a finished period
 * dropped.
 */
import { afterEach, describe, expect, it } from 'bun:test';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lazyTrialStore } from '../../sdk/creator/plans/store';

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});
const folder = async () => {
  const made = await mkdtemp(join(tmpdir(), 'plans-store-'));
  folders.push(made);
  return made;
};
const lines = async (dir: string) => (await readFile(join(dir, 'trials.log'), 'utf8')).split('\n').filter(Boolean).length;

const DAY_END = Date.UTC(2030, 0, 2);
const at = Date.UTC(2030, 0, 1, 12);
const use = { skill: 'echo', wallet: '0xabc', ip: '203.0.113.1', until: DAY_END, calls: 2, ipWallets: 3 };

describe('the plans store', () => {
  it('keeps trial and paid counts across a reopening, compacted to one line per wallet and period', async () => {
    const dir = await folder();
    const store = lazyTrialStore(dir, { now: () => at });
    expect(await store.take(use)).toEqual({ type: 'taken', left: 1 });
    await store.giveBack(use);
    expect(await store.take(use)).toEqual({ type: 'taken', left: 1 });
    for (let i = 0; i < 7; i++) await store.countPaid('echo', '0xabc', DAY_END);
    await store.close();
    expect(await lines(dir)).toBe(10);

    const reopened = lazyTrialStore(dir, { now: () => at });
    expect(await reopened.paidCalls('echo', '0xabc', DAY_END)).toBe(7);
    expect(await reopened.take(use)).toEqual({ type: 'taken', left: 0 });
    expect(await reopened.take(use)).toEqual({ type: 'used-up' });
    await reopened.close();
    // Compacted at the opening: the trial wallet and its paid calls, and the one take after it.
    expect(await lines(dir)).toBe(3);

    const nextDay = lazyTrialStore(dir, { now: () => DAY_END + 1 });
    expect(await nextDay.paidCalls('echo', '0xabc', DAY_END)).toBe(0);
    await nextDay.close();
    expect(await lines(dir)).toBe(0);
  });

  it('compacts a journal that outgrows its limit while counting, losing no count', async () => {
    const dir = await folder();
    const store = lazyTrialStore(dir, { now: () => at, journalLimit: 2_000 });
    await Promise.all(Array.from({ length: 200 }, () => store.countPaid('echo', '0xabc', DAY_END)));
    for (let i = 0; i < 50; i++) await store.countPaid('echo', '0xdef', DAY_END);
    expect(await store.paidCalls('echo', '0xabc', DAY_END)).toBe(200);
    await store.close();
    expect(await lines(dir)).toBeLessThan(60);
    const reopened = lazyTrialStore(dir, { now: () => at });
    expect(await reopened.paidCalls('echo', '0xabc', DAY_END)).toBe(200);
    expect(await reopened.paidCalls('echo', '0xdef', DAY_END)).toBe(50);
    await reopened.close();
  });
});
