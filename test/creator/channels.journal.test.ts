/**
 * The file channel store commits many calls' vouchers with one write and one fdatasync, and
 * answers each call only once its record is durable: a process killed with SIGKILL while writes
 * are in flight keeps every change it answered for. Reopened, the store also reads a journal whose
 * last line was torn by a crash, and the per-channel files of earlier versions.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { appendFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChannelState, fileChannelStore } from 'skill-market/creator';
import { eventually } from '../support/eventually';

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
