/**
 * An append-only journal of channel states with group commit: records appended while a write is
 * in progress wait and go together in the next write, followed by one `fdatasync`; each append
 * resolves only once its record is durable. One JSON line per record; reading stops at a line
 * that does not parse (the torn end of a write cut short by a crash, which nobody was answered for).
 */
import { writeSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import type { ChannelState } from './store';

/** One change: the channel's new state, or null when it was deleted. */
export interface JournalRecord {
  channelId: string;
  state: ChannelState | null;
}

export interface JournalWriter {
  readonly path: string;
  /** Resolves once the record is on disk (fdatasync'd); rejects when the write or the sync fails. */
  append(record: JournalRecord): Promise<void>;
  /** Bytes written so far. */
  size(): number;
  /** Waits for the writes in progress, then closes the file. */
  close(): Promise<void>;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** Opens (creates) the journal at `path` for appending; `syncFolder` makes its name durable. */
export async function journalWriter(path: string, syncFolder: () => Promise<void>): Promise<JournalWriter> {
  const file = await open(path, 'a', 0o600);
  await file.sync();
  await syncFolder();
  let written = (await file.stat()).size;
  let lines: string[] = [];
  let waiters: Waiter[] = [];
  let flushing: Promise<void> | undefined;
  /** A write that failed may have left part of a line: nothing more is appended after it. */
  let broken: unknown;

  const flush = async (): Promise<void> => {
    while (lines.length > 0) {
      const batch = lines.join('');
      const batchWaiters = waiters;
      lines = [];
      waiters = [];
      try {
        // Into the page cache at once (a few microseconds, one thread hop less than an async write), then to the disk.
        const bytes = Buffer.from(batch);
        for (let offset = 0; offset < bytes.length; ) offset += writeSync(file.fd, bytes, offset);
        await file.datasync();
        written += bytes.length;
        for (const w of batchWaiters) w.resolve();
      } catch (error) {
        broken = error;
        for (const w of [...batchWaiters, ...waiters]) w.reject(error);
        lines = [];
        waiters = [];
      }
    }
    flushing = undefined;
  };

  return {
    path,
    append(record) {
      if (broken !== undefined) return Promise.reject(new Error(`the channel journal ${path} failed: ${String(broken)}`));
      return new Promise<void>((resolve, reject) => {
        lines.push(`${JSON.stringify(record)}\n`);
        waiters.push({ resolve, reject });
        flushing ??= flush();
      });
    },
    size: () => written,
    async close() {
      while (flushing) await flushing;
      await file.close();
    },
  };
}

/** The records of the journal at `path`, in order, up to the first line that is not a whole record. */
export async function readJournal(path: string): Promise<JournalRecord[]> {
  const text = await readFile(path, 'utf8');
  const records: JournalRecord[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let record: JournalRecord;
    try {
      record = JSON.parse(line) as JournalRecord;
    } catch {
      break;
    }
    if (typeof record?.channelId !== 'string') break;
    records.push(record);
  }
  return records;
}
