/**
 * Where a skill server counts its free trial calls: per skill, payer wallet and period, and the
 * wallets each client IP address brought per skill and period. A use is counted in memory at once
 * (so concurrent calls of one wallet never take more than its calls) and answered only once its
 * record is durable: the file store appends it to a checksummed journal with `fdatasync` (group
 * commit, as the channel store does), so a restart never gives a wallet its calls again. At open
 * the journal is read, the periods that ended are dropped, and the rest is written back compacted.
 * One process owns the folder (a `.lock` naming its pid).
 */
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncPath, takeLock } from '../schemes/channel/file-store';
import { decodeLines, encodeLine, journalWriter, type JournalWriter } from '../schemes/channel/journal';

/** One trial call asked for. */
export interface TrialUse {
  skill: string;
  /** The payer's wallet, lower case. */
  wallet: string;
  /** The client's IP address. */
  ip: string;
  /** When the period of the use ends, ms. */
  until: number;
  /** Free calls per wallet in the period. */
  calls: number;
  /** New wallets per IP address in the period. */
  ipWallets: number;
}

/** What a request for a trial call got. */
export type TrialTake = { type: 'taken'; left: number } | { type: 'used-up' } | { type: 'ip-limit' };

/** Counts trial calls. */
export interface TrialStore {
  /** Takes one trial call, durably, when the wallet has one left and its IP address may bring it. */
  take(use: TrialUse): Promise<TrialTake>;
  /** Gives back a call taken for a run that failed (nothing was served). */
  giveBack(use: TrialUse): Promise<void>;
  /** Paid calls of `wallet` (lower case) of `skill` in the period ending at `until` (volume prices). */
  paidCalls(skill: string, wallet: string, until: number): Promise<number>;
  /** Counts one paid call (durably; the count in memory at once). */
  countPaid(skill: string, wallet: string, until: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * One journal line: `n` trial calls taken (negative: given back; 0: the wallet came from `ip`), or
 * with `k: 'paid'`, `n` paid calls counted.
 */
interface TrialRecord {
  s: string;
  w: string;
  ip: string;
  until: number;
  n: number;
  k?: 'paid';
}

const FILE = 'trials.log';

/** Options of the file store: its clock, and the journal size that starts a compaction (bytes). */
interface StoreOptions {
  now?: () => number;
  journalLimit?: number;
}
/** A journal this large is written again compacted (one line per wallet and period). */
const JOURNAL_LIMIT = 4 * 1024 * 1024;

/** The counts, in memory: what the store answers from. */
function counts(now: () => number) {
  const used = new Map<string, number>();
  const walletsOf = new Map<string, Set<string>>();
  const paid = new Map<string, number>();
  const walletKey = (r: { s: string; w: string; until: number }) => `${r.s}\n${r.w}\n${r.until}`;
  const ipKey = (r: { s: string; ip: string; until: number }) => `${r.s}\n${r.ip}\n${r.until}`;
  return {
    paid: (key: { s: string; w: string; until: number }) => (key.until <= now() ? 0 : (paid.get(walletKey(key)) ?? 0)),
    apply(r: TrialRecord) {
      if (r.until <= now()) return;
      if (r.k === 'paid') {
        paid.set(walletKey(r), (paid.get(walletKey(r)) ?? 0) + r.n);
        return;
      }
      used.set(walletKey(r), Math.max(0, (used.get(walletKey(r)) ?? 0) + r.n));
      if (r.n >= 0) {
        const wallets = walletsOf.get(ipKey(r)) ?? new Set<string>();
        wallets.add(r.w);
        walletsOf.set(ipKey(r), wallets);
      }
    },
    check(use: TrialUse): TrialTake {
      const key = { s: use.skill, w: use.wallet, ip: use.ip, until: use.until };
      const taken = used.get(walletKey(key)) ?? 0;
      if (taken >= use.calls) return { type: 'used-up' };
      const wallets = walletsOf.get(ipKey(key));
      if (!wallets?.has(use.wallet) && (wallets?.size ?? 0) >= use.ipWallets) return { type: 'ip-limit' };
      return { type: 'taken', left: use.calls - taken - 1 };
    },
    /** The records that rebuild what is counted now, one per wallet and period (for compaction). */
    records(): TrialRecord[] {
      const out: TrialRecord[] = [];
      const written = new Set<string>();
      for (const [key, wallets] of walletsOf) {
        const [s, ip, until] = key.split('\n') as [string, string, string];
        if (Number(until) <= now()) continue;
        for (const w of wallets) {
          const own = walletKey({ s, w, until: Number(until) });
          // The calls once, with the wallet's first address; its other addresses as members only.
          out.push({ s, w, ip, until: Number(until), n: written.has(own) ? 0 : (used.get(own) ?? 0) });
          written.add(own);
        }
      }
      for (const [key, n] of paid) {
        const [s, w, until] = key.split('\n') as [string, string, string];
        if (Number(until) > now() && n > 0) out.push({ s, w, ip: '', until: Number(until), n, k: 'paid' });
      }
      return out;
    },
  };
}

const recordOf = (use: TrialUse, n: number): TrialRecord => ({ s: use.skill, w: use.wallet, ip: use.ip, until: use.until, n });

function isRecord(value: unknown): value is TrialRecord {
  const r = value as Partial<TrialRecord> | null;
  return (
    typeof r?.s === 'string' &&
    typeof r.w === 'string' &&
    typeof r.ip === 'string' &&
    typeof r.until === 'number' &&
    Number.isSafeInteger(r.n) &&
    (r.k === undefined || r.k === 'paid')
  );
}

/**
 * A trial store in `folder` (created when missing), owned by this process.
 *
 * @throws ServeConfigError when another live process owns the folder
 */
async function fileTrialStore(folder: string, options: StoreOptions = {}): Promise<TrialStore> {
  const journalLimit = options.journalLimit ?? JOURNAL_LIMIT;
  const now = options.now ?? Date.now;
  await mkdir(folder, { recursive: true });
  const lockFile = join(folder, '.lock');
  await takeLock(lockFile, folder, 'trial folder');
  const path = join(folder, FILE);
  const syncFolder = () => fsyncPath(folder);
  const state = counts(now);
  let journal: JournalWriter<TrialRecord>;
  /** The journal written again from what is counted: to a temporary file, synced, renamed over it. */
  const rewrite = async () => {
    const temporary = `${path}.tmp`;
    const file = await open(temporary, 'w', 0o600);
    await file.writeFile(state.records().map(encodeLine).join(''));
    await file.sync();
    await file.close();
    await rename(temporary, path);
    await syncFolder();
  };
  /** A compaction under way: changes wait for it (counted after it, they are appended to the new journal). */
  let compacting: Promise<void> | undefined;
  const compactIfLarge = () => {
    if (compacting || journal.size() < journalLimit) return;
    compacting = (async () => {
      // Every change so far is counted and its write finished once the old journal closes.
      await journal.close();
      await rewrite();
      journal = await journalWriter<TrialRecord>(path, syncFolder);
    })().finally(() => (compacting = undefined));
  };
  /** Counts `record` and appends it; undoes the count when the write fails. */
  const write = async (record: TrialRecord) => {
    state.apply(record);
    try {
      await journal.append(record);
    } catch (error) {
      state.apply({ ...record, n: -record.n });
      throw error;
    }
    compactIfLarge();
  };
  try {
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) =>
      error.code === 'ENOENT' ? '' : Promise.reject(error),
    );
    // Damaged lines are skipped: a trial record lost gives one wallet one call again, never more.
    for (const { value } of decodeLines(text).values) if (isRecord(value)) state.apply(value);
    await rewrite();
    journal = await journalWriter<TrialRecord>(path, syncFolder);
  } catch (error) {
    await rm(lockFile, { force: true });
    throw error;
  }
  return {
    async take(use) {
      while (compacting) await compacting;
      // No await between the check and the count: concurrent calls of one wallet take its calls once.
      const answer = state.check(use);
      if (answer.type !== 'taken') return answer;
      await write(recordOf(use, 1));
      return answer;
    },
    async giveBack(use) {
      while (compacting) await compacting;
      await write(recordOf(use, -1));
    },
    paidCalls: async (s, w, until) => state.paid({ s, w, until }),
    async countPaid(s, w, until) {
      while (compacting) await compacting;
      await write({ s, w, ip: '', until, n: 1, k: 'paid' });
    },
    async close() {
      while (compacting) await compacting;
      await journal.close();
      await rm(lockFile, { force: true });
    },
  };
}

/** A trial store opened at its first use (a server whose skills have no trial takes no folder lock). */
export function lazyTrialStore(folder: string, options: StoreOptions = {}): TrialStore {
  let opened: Promise<TrialStore> | undefined;
  const store = () =>
    (opened ??= fileTrialStore(folder, options).catch((error: unknown) => {
      opened = undefined;
      throw error;
    }));
  return {
    take: async (use) => (await store()).take(use),
    giveBack: async (use) => (await store()).giveBack(use),
    paidCalls: async (skill, wallet, until) => (await store()).paidCalls(skill, wallet, until),
    countPaid: async (skill, wallet, until) => (await store()).countPaid(skill, wallet, until),
    close: async () => {
      if (opened) await (await opened.catch(() => undefined))?.close();
    },
  };
}
