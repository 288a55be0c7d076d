/**
 * The budget that survives restarts: `spending.json` in the data directory holds what was spent
 * in the current period, the reservations of calls in flight, and the last paid calls. A call
 * reserves its price before anything is signed (check and hold under one lock) and settles after:
 * spent when money moved or may have, released when it certainly did not. The lock is a mutex in
 * this process plus a lock file for other `market mcp` processes sharing the directory, and the
 * file is replaced atomically (write, then rename), so neither concurrent calls nor a crash can
 * make the budget overshoot or forget.
 */
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BudgetPeriod } from './config';

/** One paid (or possibly paid) call, as the recent-calls tool lists it. Amounts in micro-USDC. */
export interface CallRecord {
  at: string;
  slug: string;
  amount: string;
  charged: 'yes' | 'unknown';
  transaction: string | null;
  network: string | null;
  payTo: string | null;
  payer: string | null;
  /** Why the call failed after paying (the skill's error), when it did. */
  error?: string;
}

interface Reservation {
  id: string;
  slug: string;
  amount: string;
  at: string;
  /** The holding process: a reservation of a process that died counts as spent (its payment may have gone through). */
  pid: number;
  owner: string;
}

interface LedgerFile {
  version: 1;
  period: BudgetPeriod;
  periodStart: string;
  spent: string;
  reservations: Reservation[];
  calls: CallRecord[];
}

export interface BudgetSnapshot {
  period: BudgetPeriod;
  periodStart: Date;
  periodEnd: Date;
  budget: bigint;
  spent: bigint;
  reserved: bigint;
  remaining: bigint;
}

/** The budget refused a call; nothing was reserved. */
export class BudgetRefusal extends Error {
  constructor(
    readonly snapshot: BudgetSnapshot,
    readonly amount: bigint,
  ) {
    super('budget exceeded');
    this.name = 'BudgetRefusal';
  }
}

const KEEP_CALLS = 200;
/** This process's incarnation: a reservation under our pid but another owner was left by an earlier process that had the same pid. */
const OWNER = crypto.randomUUID();
const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 10_000;

export class PersistentBudget {
  private readonly file: string;
  private readonly lockFile: string;
  private readonly dataDir: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    dataDir: string,
    private readonly budget: bigint,
    private readonly period: BudgetPeriod,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.file = join(dataDir, 'spending.json');
    this.lockFile = join(dataDir, 'spending.json.lock');
    this.dataDir = dataDir;
  }

  /** Holds `amount` for a call, or throws BudgetRefusal when it would pass the period's budget. */
  reserve(amount: bigint, slug: string): Promise<string> {
    return this.locked(async (state) => {
      const snapshot = this.snapshotOf(state);
      if (amount > snapshot.remaining) throw new BudgetRefusal(snapshot, amount);
      const id = crypto.randomUUID();
      state.reservations.push({ id, slug, amount: amount.toString(), at: this.now().toISOString(), pid: process.pid, owner: OWNER });
      return { result: id, write: true };
    });
  }

  /** Ends a reservation: with a record the money counts as spent (and the call is listed), without one it is released. */
  settle(id: string, record: CallRecord | undefined): Promise<void> {
    return this.locked(async (state) => {
      const index = state.reservations.findIndex((r) => r.id === id);
      const held = index >= 0 ? state.reservations.splice(index, 1)[0] : undefined;
      if (record) {
        state.spent = (BigInt(state.spent) + BigInt(record.amount)).toString();
        state.calls = [record, ...state.calls].slice(0, KEEP_CALLS);
      }
      return { result: undefined, write: held !== undefined || record !== undefined };
    });
  }

  snapshot(): Promise<BudgetSnapshot> {
    return this.locked(async (state) => ({ result: this.snapshotOf(state), write: false }));
  }

  /** The last paid calls, newest first. */
  recent(limit: number): Promise<CallRecord[]> {
    return this.locked(async (state) => ({ result: state.calls.slice(0, limit), write: false }));
  }

  private snapshotOf(state: LedgerFile): BudgetSnapshot {
    const spent = BigInt(state.spent);
    const reserved = state.reservations.reduce((sum, r) => sum + BigInt(r.amount), 0n);
    const remaining = this.budget - spent - reserved;
    const periodStart = new Date(state.periodStart);
    return {
      period: this.period,
      periodStart,
      periodEnd: periodEnd(periodStart, this.period),
      budget: this.budget,
      spent,
      reserved,
      remaining: remaining > 0n ? remaining : 0n,
    };
  }

  /** Runs `step` on the current state under both locks; writes the state back when it asks to. */
  private locked<T>(step: (state: LedgerFile) => Promise<{ result: T; write: boolean }>): Promise<T> {
    const run = this.queue.then(async () => {
      await mkdir(this.dataDir, { recursive: true, mode: 0o700 });
      const release = await this.lockAcrossProcesses();
      try {
        const { state, raw } = await this.load();
        this.current(state);
        const { result, write } = await step(state);
        const text = `${JSON.stringify(state, null, 2)}\n`;
        if (write || text !== raw) await this.save(text);
        return result;
      } finally {
        await release();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Rolls the period over and turns dead processes' reservations into spending. */
  private current(state: LedgerFile): void {
    const start = periodStart(this.now(), this.period);
    if (state.period !== this.period || new Date(state.periodStart).getTime() !== start.getTime()) {
      // A new period starts empty; calls still in flight keep their holds.
      state.period = this.period;
      state.periodStart = start.toISOString();
      state.spent = '0';
    }
    const kept: Reservation[] = [];
    for (const r of state.reservations) {
      const orphan = r.owner !== OWNER && (r.pid === process.pid || !alive(r.pid));
      if (orphan) state.spent = (BigInt(state.spent) + BigInt(r.amount)).toString();
      else kept.push(r);
    }
    state.reservations = kept;
  }

  private async load(): Promise<{ state: LedgerFile; raw: string | undefined }> {
    const file = Bun.file(this.file);
    if (!(await file.exists())) {
      return {
        state: {
          version: 1,
          period: this.period,
          periodStart: periodStart(this.now(), this.period).toISOString(),
          spent: '0',
          reservations: [],
          calls: [],
        },
        raw: undefined,
      };
    }
    const raw = await file.text();
    let parsed: LedgerFile;
    try {
      parsed = JSON.parse(raw) as LedgerFile;
    } catch {
      throw new Error(`${this.file} is not valid JSON; move it away to start a new spending record`);
    }
    if (parsed?.version !== 1 || typeof parsed.spent !== 'string' || !Array.isArray(parsed.reservations) || !Array.isArray(parsed.calls)) {
      throw new Error(`${this.file} is not a spending record this version understands; move it away to start a new one`);
    }
    return { state: parsed, raw };
  }

  private async save(text: string): Promise<void> {
    const temporary = `${this.file}.${process.pid}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, this.file);
  }

  private async lockAcrossProcesses(): Promise<() => Promise<void>> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        const handle = await open(this.lockFile, 'wx', 0o600);
        await handle.close();
        return () => rm(this.lockFile, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const age = await stat(this.lockFile).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        // A lock is held for milliseconds; one this old was left by a process that died holding it.
        if (age > LOCK_STALE_MS) await rm(this.lockFile, { force: true });
        else if (Date.now() > deadline)
          throw new Error(`${this.lockFile} stayed locked for ${LOCK_WAIT_MS / 1000} s; another market mcp may be stuck`);
        else await Bun.sleep(5);
      }
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Periods are calendar units in UTC (weeks start on Monday). */
export function periodStart(at: Date, period: BudgetPeriod): Date {
  const d = new Date(
    Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), period === 'month' ? 1 : at.getUTCDate(), period === 'hour' ? at.getUTCHours() : 0),
  );
  if (period === 'week') d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d;
}

export function periodEnd(start: Date, period: BudgetPeriod): Date {
  const d = new Date(start);
  if (period === 'hour') d.setUTCHours(d.getUTCHours() + 1);
  else if (period === 'day') d.setUTCDate(d.getUTCDate() + 1);
  else if (period === 'week') d.setUTCDate(d.getUTCDate() + 7);
  else d.setUTCMonth(d.getUTCMonth() + 1);
  return d;
}
