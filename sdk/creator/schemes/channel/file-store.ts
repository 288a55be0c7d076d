/**
 * The default channel store: the channels live in memory, and every change is appended to a
 * journal in a folder before the call that made it is answered. Changes arriving together share
 * one `fdatasync` (group commit): each call waits until the write holding its record is durable,
 * so a server killed at any instant (SIGKILL, power loss) never loses a voucher it answered for.
 * The journal is folded into one snapshot file (`channels.snapshot`, written to a temporary file,
 * fsync'd, renamed, the folder fsync'd) at start and whenever it grows past a few megabytes. Every
 * record carries a checksum (journal.ts): a torn last line (a write that never finished, so never
 * answered) is ignored; a damaged record is skipped with an error naming it, the channels' later
 * records are kept, the damaged journal is kept beside as `….damaged-<time>`, and every channel is
 * read from the chain at its next call. A damaged snapshot stops the store from opening (nothing
 * is dropped unnoticed) until it is opened with `repair`: then what is readable is kept, the
 * damaged file is kept beside, and channels it lost start again from what the chain shows.
 * Per-channel `0x….json` files and the `channels.json` snapshot of earlier versions are read once
 * and folded in. One process owns the folder: a `.lock` file names its pid, and a second server on
 * the same folder fails at start (a lock left by a dead process is taken over). Several instances
 * of one server share channels through PostgreSQL.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ChannelStoreDamagedError, ServeConfigError } from '../../errors';
import { consoleLogger, type CreatorLogger } from '../../logger';
import { type ChannelState, type ChannelStore, keyedMutex } from './store';
import { journalWriter, readJournal } from './journal';
import { LEGACY_SNAPSHOT, readLegacySnapshot, readSnapshot, SNAPSHOT, type SnapshotRead, writeSnapshot } from './snapshot';

const LEGACY_FILE = /^0x[0-9a-f]{64}\.json$/;
const JOURNAL = /^journal-(\d+)\.log$/;
/** A journal this large is folded into the snapshot and a new one started. */
const JOURNAL_LIMIT = 8 * 1024 * 1024;

/** Options of {@link fileChannelStore}. */
export interface FileStoreOptions {
  /** Where damage found at opening is reported; default the console. */
  logger?: CreatorLogger;
  /**
   * Open even when the snapshot is damaged: keep what is readable, keep the damaged file beside
   * (`….damaged-<time>`), and let the channels it lost start again from the chain (what was charged
   * on them and not yet claimed is lost). `market serve --repair-channels` opens the folder this way.
   */
  repair?: boolean;
}

/**
 * A store of channel states in `folder` (created when missing), owned by this process.
 *
 * @throws ServeConfigError when another live process owns the folder
 * @throws ChannelStoreDamagedError when the snapshot is damaged (without `repair`)
 * @example const store = await fileChannelStore('.market/channels');
 */
export async function fileChannelStore(folder: string, options: FileStoreOptions = {}): Promise<ChannelStore> {
  await mkdir(folder, { recursive: true });
  const lockFile = join(folder, '.lock');
  await takeLock(lockFile, folder);
  const syncFolder = () => fsyncPath(folder);
  let states: Map<string, ChannelState>;
  let sequence: number;
  try {
    ({ states, sequence } = await recover(folder, options, syncFolder));
  } catch (error) {
    await rm(lockFile, { force: true });
    throw error;
  }
  let journal = await journalWriter(join(folder, `journal-${sequence}.log`), syncFolder);

  /** Starts a new journal and folds the old one into the snapshot. */
  let compacting: Promise<void> | undefined;
  const compact = () => {
    sequence += 1;
    const nextPath = join(folder, `journal-${sequence}.log`);
    compacting = (async () => {
      const next = await journalWriter(nextPath, syncFolder);
      const old = journal;
      journal = next;
      // Memory takes a change before its record is appended: once the old journal's last write is
      // durable, every change in it is in `states`, and the snapshot holds them.
      await old.close();
      await writeSnapshot(folder, new Map(states), syncFolder);
      await rm(old.path, { force: true });
      await syncFolder();
    })()
      .catch(() => {
        // The old journal stays; the next start replays it.
      })
      .finally(() => {
        compacting = undefined;
      });
  };

  const lock = keyedMutex();
  let closed = false;
  return {
    update: (channelId, work) =>
      lock(channelId.toLowerCase(), async () => {
        if (closed) throw new Error('the channel store is closed');
        const key = channelId.toLowerCase();
        const { next, value } = await work(states.get(key));
        if (next === undefined) return value;
        const before = states.get(key);
        if (next === null) states.delete(key);
        else states.set(key, next);
        try {
          await journal.append({ channelId: key, state: next });
        } catch (error) {
          // Not durable, so not answered: the channel is as it was (this update still holds it).
          if (before) states.set(key, before);
          else states.delete(key);
          throw error;
        }
        if (journal.size() > JOURNAL_LIMIT && !compacting) compact();
        return value;
      }),
    get: async (channelId) => states.get(channelId.toLowerCase()),
    list: async () => [...states.values()],
    async close() {
      if (closed) return;
      closed = true;
      if (compacting) await compacting;
      await journal.close();
      await rm(lockFile, { force: true });
    },
  };
}

/**
 * Reads everything the folder holds (legacy files, snapshot, journals, in that order), reports and
 * sets aside what is damaged, folds the rest into one snapshot, and answers the states and the
 * number of the journal to start.
 */
async function recover(folder: string, options: FileStoreOptions, syncFolder: () => Promise<void>) {
  const logger = options.logger ?? consoleLogger;
  const at = Date.now();
  const states = new Map<string, ChannelState>();
  const names = await readdir(folder);
  const legacy = names.filter((name) => LEGACY_FILE.test(name));
  for (const name of legacy) {
    const text = await readFile(join(folder, name), 'utf8');
    try {
      const state = JSON.parse(text) as ChannelState;
      states.set(state.channelId.toLowerCase(), state);
    } catch (error) {
      throw new ChannelStoreDamagedError(
        `the channel file ${join(folder, name)} of an earlier version cannot be read (${String(error)}): repair or remove it`,
      );
    }
  }
  /** Files to keep beside, damaged, when the folder is folded. */
  const aside: string[] = [];
  for (const [name, read] of [
    [LEGACY_SNAPSHOT, await readLegacySnapshot(folder)],
    [SNAPSHOT, await readSnapshot(folder)],
  ] as [string, SnapshotRead | undefined][]) {
    if (!read) continue;
    for (const [id, state] of read.states) states.set(id, state);
    if (read.problems.length === 0) continue;
    const path = join(folder, name);
    const what = `the channel snapshot ${path} is damaged: ${read.problems.join('; ')}`;
    if (!options.repair) {
      throw new ChannelStoreDamagedError(
        `${what}. Channel sales stay stopped so that no voucher is dropped unnoticed: restore the folder from a backup, or start once with \`market serve <module> --repair-channels\` (fileChannelStore(folder, { repair: true })) to keep what is readable (${read.states.size} channel(s)) and start the others again from what the chain shows`,
      );
    }
    logger.error(`${what}; repaired: ${read.states.size} channel(s) kept, the others start again from what the chain shows`, {
      keptAs: `${path}.damaged-${at}`,
    });
    aside.push(name);
  }
  const journals = names
    .map((name) => JOURNAL.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  for (const [name] of journals) {
    const { records, damaged } = await readJournal(join(folder, name));
    for (const { channelId, state } of records) {
      if (state) states.set(channelId, state);
      else states.delete(channelId);
    }
    if (damaged.length === 0) continue;
    const lines = damaged.map((d) => `line ${d.line} (${d.reason}${d.channelId ? `, channel ${d.channelId}` : ''})`).join(', ');
    logger.error(
      `the channel journal ${join(folder, name)} has ${damaged.length} damaged record(s): ${lines}. Skipped; every later record is kept, and every channel is read from the chain at its next call`,
      { keptAs: join(folder, `${name}.damaged-${at}`) },
    );
    aside.push(name);
  }
  if (aside.length > 0) {
    // What was lost is not known here: every mirror is read again, and a charge behind the chain is raised to it.
    for (const [id, state] of states) states.set(id, { ...state, onchainSyncedAt: 0 });
  }
  // Fold what was found into one snapshot, so the journal starts empty.
  const sequence = journals.length > 0 ? Number(journals.at(-1)![1]) + 1 : 1;
  const folded = [...legacy, ...journals.map((m) => m[0]), ...(names.includes(LEGACY_SNAPSHOT) ? [LEGACY_SNAPSHOT] : [])];
  if (folded.length > 0 || aside.length > 0) {
    for (const name of aside) await rename(join(folder, name), join(folder, `${name}.damaged-${at}`));
    await writeSnapshot(folder, states, syncFolder);
    for (const name of folded) if (!aside.includes(name)) await rm(join(folder, name), { force: true });
    await syncFolder();
  }
  return { states, sequence };
}

/** fsync of a file or folder (a folder: the names in it are durable). */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Takes `lockFile` for this process (one owner per folder; a lock left by a dead process is taken over). */
export async function takeLock(lockFile: string, folder: string, what = 'channel folder'): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const file = await open(lockFile, 'wx', 0o600);
      await file.writeFile(String(process.pid));
      await file.sync();
      await file.close();
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number((await readFile(lockFile, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
      throw new ServeConfigError(
        `the ${what} ${folder} is in use by process ${owner}; one server per folder${what === 'channel folder' ? ' (share channels between instances with DATABASE_URL)' : ''}`,
      );
    }
    await rm(lockFile, { force: true }); // left by a process that is gone
  }
  throw new ServeConfigError(`cannot lock the ${what} ${folder}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
