/**
 * The snapshot of the file channel store: every channel's state in one file, folded from the
 * journal. It is written in the journal's form (one checksummed line per channel, journal.ts) after
 * a first line that says how many channels follow, to a temporary file that is fsync'd and renamed
 * over the last one: a snapshot that fails a checksum, or holds fewer lines than its first says, is
 * damaged. `channels.json`, the one JSON object earlier versions wrote, is still read.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeLines, encodeLine, isJournalRecord } from './journal';
import type { ChannelState } from './store';

export const SNAPSHOT = 'channels.snapshot';
export const LEGACY_SNAPSHOT = 'channels.json';

/** What a snapshot file held: the states read, and what is wrong with it (nothing when whole). */
export interface SnapshotRead {
  states: Map<string, ChannelState>;
  /** Why the file is damaged; empty when it is whole. */
  problems: string[];
}

/** Writes `states` as the snapshot of `folder`, durably (temporary file, fsync, rename, then `syncFolder`). */
export async function writeSnapshot(folder: string, states: ReadonlyMap<string, ChannelState>, syncFolder: () => Promise<void>) {
  const path = join(folder, SNAPSHOT);
  const temporary = `${path}.${process.pid}.tmp`;
  const file = await open(temporary, 'w', 0o600);
  try {
    const lines = [encodeLine({ snapshot: 1, channels: states.size })];
    for (const [channelId, state] of states) lines.push(encodeLine({ channelId, state }));
    await file.writeFile(lines.join(''));
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  await syncFolder();
}

/** The snapshot of `folder` in the current form; undefined when there is none. */
export async function readSnapshot(folder: string): Promise<SnapshotRead | undefined> {
  const text = await readOptional(join(folder, SNAPSHOT));
  if (text === undefined) return undefined;
  const { values, damaged, torn } = decodeLines(text);
  const states = new Map<string, ChannelState>();
  const problems = damaged.map((d) => `line ${d.line}: ${d.reason}${d.channelId ? ` (channel ${d.channelId})` : ''}`);
  if (torn) problems.push('it ends in the middle of a line');
  const [head, ...rest] = values;
  const announced = head?.line === 1 ? (head.value as { channels?: unknown }).channels : undefined;
  for (const { line, value } of head?.line === 1 ? rest : values) {
    if (isJournalRecord(value) && value.state) states.set(value.channelId, value.state);
    else problems.push(`line ${line}: not a channel record`);
  }
  if (typeof announced !== 'number') problems.push('its first line does not say how many channels it holds');
  else if (announced !== states.size + damaged.length)
    problems.push(`it holds ${states.size + damaged.length} of its ${announced} channels`);
  return { states, problems };
}

/** The one JSON object of channel states earlier versions wrote; undefined when there is none. */
export async function readLegacySnapshot(folder: string): Promise<SnapshotRead | undefined> {
  const text = await readOptional(join(folder, LEGACY_SNAPSHOT));
  if (text === undefined) return undefined;
  try {
    const all = JSON.parse(text) as Record<string, ChannelState>;
    if (typeof all !== 'object' || all === null || Array.isArray(all)) throw new Error('not an object of channels');
    return { states: new Map(Object.entries(all)), problems: [] };
  } catch (error) {
    return { states: new Map(), problems: [`it cannot be read as JSON (${error instanceof Error ? error.message : String(error)})`] };
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
