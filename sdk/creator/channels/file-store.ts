/**
 * The default channel store: one JSON file per channel in a folder, each write to a temporary
 * file, fsync'd, renamed over the old one and the folder fsync'd, so a server killed at any
 * instant (SIGKILL, power loss) finds either the previous state or the new one, never half of
 * one, and never loses a voucher it answered for. One process owns the folder: a `.lock` file
 * names its pid, and a second server on the same folder fails at start (a lock left by a dead
 * process is taken over). Several instances of one server share channels through PostgreSQL.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hex } from '../../x402/index';
import { ServeConfigError } from '../errors';
import { type ChannelState, type ChannelStore, keyedMutex } from './store';

const FILE = /^0x[0-9a-f]{64}\.json$/;

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
  const lock = keyedMutex();
  const fileOf = (channelId: Hex) => join(folder, `${channelId.toLowerCase()}.json`);
  const read = async (path: string): Promise<ChannelState | undefined> => {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as ChannelState;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  };
  const syncFolder = async () => {
    const dir = await open(folder, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  };
  const write = async (path: string, state: ChannelState) => {
    const temporary = `${path}.${process.pid}.tmp`;
    const file = await open(temporary, 'w', 0o600);
    try {
      await file.writeFile(JSON.stringify(state));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
    await syncFolder();
  };
  let closed = false;
  return {
    update: (channelId, work) =>
      lock(channelId.toLowerCase(), async () => {
        if (closed) throw new Error('the channel store is closed');
        const path = fileOf(channelId);
        const { next, value } = await work(await read(path));
        if (next === null) {
          await rm(path, { force: true });
          await syncFolder();
        } else if (next) await write(path, next);
        return value;
      }),
    get: (channelId) => read(fileOf(channelId)),
    async list() {
      const names = (await readdir(folder)).filter((name) => FILE.test(name));
      const states = await Promise.all(names.map((name) => read(join(folder, name))));
      return states.filter((s): s is ChannelState => s !== undefined);
    },
    async close() {
      if (closed) return;
      closed = true;
      await rm(lockFile, { force: true });
    },
  };
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
