/**
 * The persisted budget on its own: periods roll over on calendar boundaries (UTC), a reservation
 * left by a process that died counts as spent (its payment may have gone through), settling
 * records the call, and the file is always whole JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { PersistentBudget, periodEnd, periodStart } from '../../src/mcp/ledger';
import { tempDir } from './support';

let home: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  home = await tempDir();
});
afterAll(async () => home?.remove());
const dir = () => `${home.path}/${crypto.randomUUID()}`;

describe('budget periods', () => {
  it('start on UTC calendar boundaries (weeks on Monday) and end one unit later', () => {
    const at = new Date('2026-11-26T15:42:10Z'); // a Thursday
    expect(periodStart(at, 'hour').toISOString()).toBe('2026-11-26T15:00:00.000Z');
    expect(periodStart(at, 'day').toISOString()).toBe('2026-11-26T00:00:00.000Z');
    expect(periodStart(at, 'week').toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(periodStart(at, 'month').toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(periodEnd(periodStart(at, 'month'), 'month').toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('start empty in a new period, while the old one stays spent until then', async () => {
    let now = new Date('2026-11-23T23:59:00Z');
    const path = dir();
    const budget = new PersistentBudget(path, 10n, 'day', () => now);
    await budget.settle(await budget.reserve(10n, 'a'), record('a', 10n));
    await expect(budget.reserve(1n, 'a')).rejects.toMatchObject({ name: 'BudgetRefusal' });
    now = new Date('2026-11-24T00:00:01Z');
    expect(await new PersistentBudget(path, 10n, 'day', () => now).snapshot()).toMatchObject({ spent: 0n, remaining: 10n });
    expect(await budget.recent(5)).toHaveLength(1);
  });
});

describe('reservations', () => {
  it('count as spent when the process that held them died (the payment may have gone through)', async () => {
    const path = dir();
    const dead = Bun.spawn(['true']);
    await dead.exited;
    const state = {
      version: 1,
      period: 'day',
      periodStart: periodStart(new Date(), 'day').toISOString(),
      spent: '3',
      reservations: [{ id: 'x', slug: 'lost', amount: '4', at: new Date().toISOString(), pid: dead.pid, owner: 'an-earlier-process' }],
      calls: [],
    };
    await Bun.write(`${path}/spending.json`, JSON.stringify(state));
    expect(await new PersistentBudget(path, 10n, 'day').snapshot()).toMatchObject({ spent: 7n, reserved: 0n, remaining: 3n });
  });

  it('released without a record leave nothing spent; the file stays whole JSON', async () => {
    const path = dir();
    const budget = new PersistentBudget(path, 10n, 'day');
    const id = await budget.reserve(6n, 's');
    expect(await budget.snapshot()).toMatchObject({ reserved: 6n, remaining: 4n });
    await budget.settle(id, undefined);
    expect(await budget.snapshot()).toMatchObject({ spent: 0n, reserved: 0n, remaining: 10n });
    expect(JSON.parse(await Bun.file(`${path}/spending.json`).text())).toMatchObject({ version: 1, spent: '0', reservations: [] });
  });

  it('refuse to read a file that is not a spending record instead of starting over', async () => {
    const path = dir();
    await Bun.write(`${path}/spending.json`, '{"spent": 12');
    await expect(new PersistentBudget(path, 10n, 'day').snapshot()).rejects.toThrow('not valid JSON');
  });
});

function record(slug: string, amount: bigint) {
  return {
    at: new Date().toISOString(),
    slug,
    amount: amount.toString(),
    charged: 'yes' as const,
    transaction: null,
    network: null,
    payTo: null,
    payer: null,
  };
}
