/**
 * The file channel store commits many calls' vouchers with one write and one fdatasync, and
 * answers each call only once its record is durable: a process killed with SIGKILL while writes
 * are in flight keeps every change it answered for. Reopened, the store also reads a journal whose
 * last line was torn by a crash, and the per-channel files and snapshot of earlier versions. Every
 * record carries a checksum: a damaged record is skipped with an error naming it and every later
 * record is kept; a damaged snapshot stops the store with what to do, until it is opened with `repair`.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { appendFile, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChannelState, ChannelStoreDamagedError, fileChannelStore } from 'skill-market/creator';
import { eventually } from '../support/eventually';
import { recordingLogger } from '../support/skill-server';

const CHANNELS = 48;
const folders: string[] = [];
const tempFolder = async () => {
  const folder = await mkdtemp(join(tmpdir(), 'channel-journal-'));
  folders.push(folder);
  return folder;
};

afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

const idOf = (c: number) => `0x${c.toString(16).padStart(64, '0')}` as const;
const charged = (state: ChannelState | undefined) => Number(state?.chargedCumulativeAmount ?? 0);

describe('the file channel store under SIGKILL', () => {
  it('keeps every update it answered for when killed while a group commit is in flight', async () => {
    const folder = await tempFolder();
    const child = Bun.spawn(['bun', join(import.meta.dir, 'fixtures', 'channel-store-writer.ts'), folder, String(CHANNELS)], {
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const answered = new Map<number, number>();
    let total = 0;
    const reading = (async () => {
      const decoder = new TextDecoder();
      let rest = '';
      for await (const chunk of child.stdout) {
        const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          const [c, n] = line.split(' ').map(Number) as [number, number];
          answered.set(c, Math.max(answered.get(c) ?? 0, n));
          total++;
        }
      }
    })();
    await eventually(
      () => total,
      (n) => n >= 1500,
      '1,500 answered updates',
      60_000,
    );
    child.kill('SIGKILL');
    await child.exited;
    await reading;

    const store = await fileChannelStore(folder);
    try {
      for (let c = 0; c < CHANNELS; c++) {
        const kept = charged(await store.get(idOf(c)));
        // Every answered update is kept; at most the one in flight on the channel besides.
        expect(kept).toBeGreaterThanOrEqual(answered.get(c) ?? 0);
        expect(kept).toBeLessThanOrEqual((answered.get(c) ?? 0) + 1);
      }
    } finally {
      await store.close();
    }
  }, 90_000);
});

describe('the file channel store reopened', () => {
  it('reads the journal up to a torn last line, and folds in per-channel files of earlier versions', async () => {
    const folder = await tempFolder();
    const store = await fileChannelStore(folder);
    const base = { config: {}, signedMaxClaimable: '0', signature: '0x', balance: '0', totalClaimed: '0' };
    const state = (c: number, n: number) => ({ ...(base as ChannelState), channelId: idOf(c), chargedCumulativeAmount: String(n) });
    for (let n = 1; n <= 3; n++) await store.update(idOf(1), async () => ({ next: state(1, n), value: undefined }));
    await store.update(idOf(2), async () => ({ next: state(2, 7), value: undefined }));
    await store.update(idOf(2), async () => ({ next: null, value: undefined }));
    // Killed: a write cut in the middle of a record, the lock left behind by a process that is gone.
    // (The store is closed first only so that this process holds no open file handle: on disk
    // what follows is what a kill leaves, the dead owner's lock included.)
    await store.close();
    const [journal] = (await readdir(folder)).filter((name) => name.startsWith('journal-'));
    await appendFile(join(folder, journal!), '{"channelId":"0x01","state":{"chargedCum');
    const gone = Bun.spawn(['true']);
    await gone.exited;
    await writeFile(join(folder, '.lock'), String(gone.pid));
    await writeFile(join(folder, `${idOf(3)}.json`), JSON.stringify(state(3, 5)));

    const reopened = await fileChannelStore(folder);
    try {
      expect(charged(await reopened.get(idOf(1)))).toBe(3);
      expect(await reopened.get(idOf(2))).toBeUndefined();
      expect(charged(await reopened.get(idOf(3)))).toBe(5);
      expect((await reopened.list()).length).toBe(2);
      await reopened.update(idOf(1), async () => ({ next: state(1, 4), value: undefined }));
    } finally {
      await reopened.close();
    }
    const again = await fileChannelStore(folder);
    expect(charged(await again.get(idOf(1)))).toBe(4);
    await again.close();
  });
});

const base = { config: {}, signedMaxClaimable: '0', signature: '0x', balance: '0', totalClaimed: '0', onchainSyncedAt: 1 };
const stateOf = (c: number, n: number) => ({
  ...(base as unknown as ChannelState),
  channelId: idOf(c),
  chargedCumulativeAmount: String(n),
});
/** A folder whose journal holds, in this order, channel 1 at 1, 2, 3, channel 2 at 7, channel 1 at 4 (closed, not folded). */
async function journalled() {
  const folder = await tempFolder();
  const store = await fileChannelStore(folder);
  for (const [c, n] of [
    [1, 1],
    [1, 2],
    [1, 3],
    [2, 7],
    [1, 4],
  ] as const)
    await store.update(idOf(c), async () => ({ next: stateOf(c, n), value: undefined }));
  await store.close();
  const [journal] = (await readdir(folder)).filter((name) => name.startsWith('journal-'));
  return { folder, journal: join(folder, journal!) };
}

/** The file with the last `find` on its line `line` (from 1) replaced by `by`. */
async function changeByte(path: string, line: number, find: string, by: string) {
  const lines = (await readFile(path, 'utf8')).split('\n');
  const at = lines[line - 1]!.lastIndexOf(find);
  expect(at).toBeGreaterThan(0);
  lines[line - 1] = `${lines[line - 1]!.slice(0, at)}${by}${lines[line - 1]!.slice(at + find.length)}`;
  await writeFile(path, lines.join('\n'));
}

describe('a damaged channel journal', () => {
  it('skips a record that fails its checksum with an error naming it, keeps every later record, and keeps the damaged file', async () => {
    const { folder, journal } = await journalled();
    // One changed digit: still JSON, so only the checksum tells.
    await changeByte(journal, 2, '"chargedCumulativeAmount":"2"', '"chargedCumulativeAmount":"9"');
    const logger = recordingLogger();
    const store = await fileChannelStore(folder, { logger });
    try {
      expect(charged(await store.get(idOf(1)))).toBe(4);
      expect(charged(await store.get(idOf(2)))).toBe(7);
      const errors = logger.lines.filter((l) => l.startsWith('error '));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(`${journal} has 1 damaged record(s): line 2 (checksum mismatch, channel ${idOf(1)})`);
      expect((await readdir(folder)).filter((name) => name.includes('.damaged-'))).toHaveLength(1);
      // Every channel is read from the chain at its next call.
      expect((await store.list()).map((s) => s.onchainSyncedAt)).toEqual([0, 0]);
    } finally {
      await store.close();
    }
  });

  it('keeps the records after a line that is not JSON, and reads the lines of earlier versions (no checksum)', async () => {
    const folder = await tempFolder();
    const bare = (c: number, n: number) => JSON.stringify({ channelId: idOf(c), state: stateOf(c, n) });
    await writeFile(join(folder, 'journal-3.log'), `${bare(1, 1)}\n${bare(2, 5)}\n{"channelId":"${idOf(1)}","sta\n${bare(1, 3)}\n`);
    const logger = recordingLogger();
    const store = await fileChannelStore(folder, { logger });
    try {
      expect(charged(await store.get(idOf(1)))).toBe(3);
      expect(charged(await store.get(idOf(2)))).toBe(5);
      expect(logger.lines.filter((l) => l.startsWith('error '))).toEqual([
        expect.stringContaining(`journal-3.log has 1 damaged record(s): line 3 (not JSON, channel ${idOf(1)})`),
      ]);
      await store.update(idOf(2), async () => ({ next: stateOf(2, 6), value: undefined }));
    } finally {
      await store.close();
    }
    // The next journal is numbered after it, and written with checksums.
    const names = await readdir(folder);
    expect(names).toContain('journal-4.log');
    expect(await readFile(join(folder, 'journal-4.log'), 'utf8')).toMatch(/^[0-9a-f]{16} \{"channelId"/);
  });
});

describe('a damaged channel snapshot', () => {
  /** A folder whose snapshot holds channels 1 to 3 (the journal folded at a reopening). */
  const snapshotted = async () => {
    const folder = await tempFolder();
    const store = await fileChannelStore(folder);
    for (let c = 1; c <= 3; c++) await store.update(idOf(c), async () => ({ next: stateOf(c, c * 10), value: undefined }));
    await store.close();
    await (await fileChannelStore(folder)).close();
    return { folder, snapshot: join(folder, 'channels.snapshot') };
  };

  it('stops the store with the file, the problem and the repair command; repair keeps what is readable', async () => {
    const { folder, snapshot } = await snapshotted();
    const text = await readFile(snapshot, 'utf8');
    // Cut in the middle of the last channel's line.
    await truncate(snapshot, text.length - 40);
    const opening = fileChannelStore(folder);
    await expect(opening).rejects.toBeInstanceOf(ChannelStoreDamagedError);
    const error = (await opening.catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(
      `the channel snapshot ${snapshot} is damaged: it ends in the middle of a line; it holds 2 of its 3 channels`,
    );
    expect(error.message).toContain('market serve <module> --repair-channels');

    // The lock was let go: the folder opens again, with repair.
    const logger = recordingLogger();
    const repaired = await fileChannelStore(folder, { logger, repair: true });
    try {
      expect([charged(await repaired.get(idOf(1))), charged(await repaired.get(idOf(2)))]).toEqual([10, 20]);
      expect(await repaired.get(idOf(3))).toBeUndefined();
      expect(logger.lines.filter((l) => l.startsWith('error '))).toEqual([expect.stringContaining('repaired: 2 channel(s) kept')]);
    } finally {
      await repaired.close();
    }
    expect((await readdir(folder)).filter((name) => name.startsWith('channels.snapshot.damaged-'))).toHaveLength(1);
    const again = await fileChannelStore(folder);
    expect((await again.list()).length).toBe(2);
    await again.close();
  });

  it('tells a changed byte, and a snapshot cut at the end of a line', async () => {
    const { folder, snapshot } = await snapshotted();
    await changeByte(snapshot, 3, '"chargedCumulativeAmount":"20"', '"chargedCumulativeAmount":"90"');
    await expect(fileChannelStore(folder)).rejects.toThrow(`is damaged: line 3: checksum mismatch (channel ${idOf(2)})`);
    await changeByte(snapshot, 3, '"chargedCumulativeAmount":"90"', '"chargedCumulativeAmount":"20"');
    const lines = (await readFile(snapshot, 'utf8')).split('\n');
    await writeFile(snapshot, `${lines.slice(0, 3).join('\n')}\n`);
    await expect(fileChannelStore(folder)).rejects.toThrow('it holds 2 of its 3 channels');
  });

  it('reads the channels.json of earlier versions, and stops on one that is not whole', async () => {
    const folder = await tempFolder();
    await writeFile(join(folder, 'channels.json'), JSON.stringify({ [idOf(1)]: stateOf(1, 5), [idOf(2)]: stateOf(2, 6) }));
    const store = await fileChannelStore(folder);
    expect(charged(await store.get(idOf(2)))).toBe(6);
    await store.close();
    const names = await readdir(folder);
    expect(names).toContain('channels.snapshot');
    expect(names).not.toContain('channels.json');

    const torn = await tempFolder();
    await writeFile(join(torn, 'channels.json'), JSON.stringify({ [idOf(1)]: stateOf(1, 5) }).slice(0, -10));
    await expect(fileChannelStore(torn)).rejects.toThrow(
      `the channel snapshot ${join(torn, 'channels.json')} is damaged: it cannot be read as JSON`,
    );
  });
});
