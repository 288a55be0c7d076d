/**
 * The default channel store: the channels live in memory, and every change is appended to a
 * journal in a folder before the call that made it is answered. Changes arriving together share
 * one `fdatasync` (group commit): each call waits until the write holding its record is durable,
 * so a server killed at any instant (SIGKILL, power loss) never loses a voucher it answered for.
 * The journal is folded into one snapshot file (`channels.json`, written to a temporary file,
 * fsync'd, renamed, the folder fsync'd) at start and whenever it grows past a few megabytes; a
 * torn last line (a write that never finished, so never answered) is ignored. Per-channel
 * `0x….json` files left by earlier versions are read once and folded in. One process owns the
 * folder: a `.lock` file names its pid, and a second server on the same folder fails at start (a
 * lock left by a dead process is taken over). Several instances of one server share channels
 * through PostgreSQL.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ServeConfigError } from '../../errors';
import { type ChannelState, type ChannelStore, keyedMutex } from './store';
import { journalWriter, readJournal } from './journal';

const LEGACY_FILE = /^0x[0-9a-f]{64}\.json$/;
const JOURNAL = /^journal-(\d+)\.log$/;
const SNAPSHOT = 'channels.json';
/** A journal this large is folded into the snapshot and a new one started. */
const JOURNAL_LIMIT = 8 * 1024 * 1024;

/**
 * A store of channel states in `folder` (created when missing), owned by this process.
 *
 * @throws ServeConfigError when another live process owns the folder
 * @example const store = await fileChannelStore('.market/channels');
 */
export async function fileChannelStore(folder: string): Promise<ChannelStore> {
  await mkdir(folder, { recursive: true });
  const lockFile = join(folder, '.lock');
  await takeLock(lockFile, folder);
  const states = new Map<string, ChannelState>();
  const names = await readdir(folder);
  const legacy = names.filter((name) => LEGACY_FILE.test(name));
  for (const name of legacy) {
    const state = await readJson<ChannelState>(join(folder, name));
    if (state) states.set(state.channelId.toLowerCase(), state);
  }
  for (const [id, state] of Object.entries((await readJson<Record<string, ChannelState>>(join(folder, SNAPSHOT))) ?? {})) {
    states.set(id, state);
  }
  const journals = names
    .map((name) => JOURNAL.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  for (const m of journals) {
    for (const { channelId, state } of await readJournal(join(folder, m[0]))) {
      if (state) states.set(channelId, state);
      else states.delete(channelId);
    }
  }
  const syncFolder = () => fsyncPath(folder);
  const writeSnapshot = async (all: Map<string, ChannelState>) => {
    const path = join(folder, SNAPSHOT);
    const temporary = `${path}.${process.pid}.tmp`;
    const file = await open(temporary, 'w', 0o600);
    try {
      await file.writeFile(JSON.stringify(Object.fromEntries(all)));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
    await syncFolder();
  };
  // Fold what was found into one snapshot, so the journal starts empty.
  let sequence = journals.length > 0 ? Number(journals.at(-1)![1]) + 1 : 1;
  if (legacy.length > 0 || journals.length > 0) {
    await writeSnapshot(states);
    for (const name of [...legacy, ...journals.map((m) => m[0])]) await rm(join(folder, name), { force: true });
    await syncFolder();
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
      await writeSnapshot(new Map(states));
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

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function takeLock(lockFile: string, folder: string): Promise<void> {
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
        `the channel folder ${folder} is in use by process ${owner}; one server per folder (share channels between instances with DATABASE_URL)`,
      );
    }
    await rm(lockFile, { force: true }); // left by a process that is gone
  }
  throw new ServeConfigError(`cannot lock the channel folder ${folder}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
