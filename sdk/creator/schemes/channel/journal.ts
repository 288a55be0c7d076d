/**
 * An append-only journal of channel states with group commit: records appended while a write is
 * in progress wait and go together in the next write, followed by one `fdatasync`; each append
 * resolves only once its record is durable.
 *
 * One line per record: a checksum of the record's JSON (16 hex digits of its SHA-256), a space, the
 * JSON. A line that fails its checksum or does not parse is damaged: the reader skips it and says
 * which one it was, and keeps every later record. A last line without its newline is the torn end
 * of a write cut short by a crash (nobody was answered for it). Lines written by earlier versions
 * (the JSON alone, starting with `{`) are read as they are. The channel snapshot is written in the
 * same form (snapshot.ts).
 */
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import type { ChannelState } from './store';

/** One change: the channel's new state, or null when it was deleted. */
export interface JournalRecord {
  channelId: string;
  state: ChannelState | null;
}

/** A line that is not a whole record: where it is, why, and the channel it names when that can be read. */
export interface DamagedLine {
  line: number;
  reason: string;
  channelId?: string;
}

/** What a file of checksummed lines holds. */
export interface Lines {
  /** The values of the good lines, with their line numbers (from 1). */
  values: { line: number; value: unknown }[];
  /** Complete lines that are damaged. */
  damaged: DamagedLine[];
  /** Whether the file ends in a line without its newline (a write cut short). */
  torn: boolean;
}

const sum = (json: string) => createHash('sha256').update(json).digest('hex').slice(0, 16);
const CHECKED = /^([0-9a-f]{16}) (.*)$/s;
const NAMED_CHANNEL = /"channelId":"(0x[0-9a-fA-F]{64})"/;

/** `value` as one checksummed line (newline included). */
export function encodeLine(value: unknown): string {
  const json = JSON.stringify(value);
  return `${sum(json)} ${json}\n`;
}

/** Reads checksummed lines (and lines of bare JSON, as earlier versions wrote them). */
export function decodeLines(text: string): Lines {
  const lines = text.split('\n');
  // The piece after the last newline: empty for a file that ends well, else a write cut short.
  const last = lines.pop() ?? '';
  const result: Lines = { values: [], damaged: [], torn: last !== '' };
  for (const [index, line] of lines.entries()) {
    if (line === '') continue;
    const damaged = (reason: string) => {
      const channelId = NAMED_CHANNEL.exec(line)?.[1]?.toLowerCase();
      result.damaged.push({ line: index + 1, reason, ...(channelId ? { channelId } : {}) });
    };
    let json = line;
    if (!line.startsWith('{')) {
      const checked = CHECKED.exec(line);
      if (!checked) {
        damaged('no checksum');
        continue;
      }
      json = checked[2]!;
      if (sum(json) !== checked[1]) {
        damaged('checksum mismatch');
        continue;
      }
    }
    try {
      result.values.push({ line: index + 1, value: JSON.parse(json) as unknown });
    } catch {
      damaged('not JSON');
    }
  }
  return result;
}

/** Whether `value` is a journal record. */
export function isJournalRecord(value: unknown): value is JournalRecord {
  const record = value as Partial<JournalRecord> | null;
  return typeof record?.channelId === 'string' && typeof record.state === 'object';
}

/** The records of the journal at `path`, in order; lines that are not records are reported as damaged. */
export async function readJournal(path: string): Promise<{ records: JournalRecord[]; damaged: DamagedLine[]; torn: boolean }> {
  const { values, damaged, torn } = decodeLines(await readFile(path, 'utf8'));
  const records: JournalRecord[] = [];
  for (const { line, value } of values) {
    if (isJournalRecord(value)) records.push(value);
    else damaged.push({ line, reason: 'not a channel record' });
  }
  return { records, damaged: damaged.sort((a, b) => a.line - b.line), torn };
}

export interface JournalWriter<R = JournalRecord> {
  readonly path: string;
  /** Resolves once the record is on disk (fdatasync'd); rejects when the write or the sync fails. */
  append(record: R): Promise<void>;
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
export async function journalWriter<R = JournalRecord>(path: string, syncFolder: () => Promise<void>): Promise<JournalWriter<R>> {
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
      if (broken !== undefined) return Promise.reject(new Error(`the journal ${path} failed: ${String(broken)}`));
      return new Promise<void>((resolve, reject) => {
        lines.push(encodeLine(record));
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
