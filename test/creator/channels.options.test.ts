/**
 * What `serve({ channels })` and `skill({ channels })` offer, checked without a chain: which skills
 * offer a channel and in which order, the channel's terms, refused options, and the file store's
 * one-process lock.
 */
import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createSkillHandler,
  fileChannelStore,
  ServeConfigError,
  SkillDefinitionError,
  skill,
  type SkillHandlerOptions,
} from 'skill-market/creator';
import { recordingLogger } from '../support/skill-server';

const key = generatePrivateKey();
const asset = { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2', decimals: 6 } as const;
const folders: string[] = [];
const tempFolder = async () => {
  const folder = await mkdtemp(join(tmpdir(), 'channel-options-'));
  folders.push(folder);
  return folder;
};

afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

const base = (extra: Partial<SkillHandlerOptions> = {}): SkillHandlerOptions => ({
  payTo: '0x000000000000000000000000000000000000dEaD',
  network: 'eip155:84532',
  asset,
  logger: recordingLogger(),
  ...extra,
});
const skills = {
  cheap: skill({ price: '$0.001' }, () => 1),
  dear: skill({ price: '$0.05' }, () => 1),
  forced: skill({ price: '$0.05', channels: true }, () => 1),
  never: skill({ price: '$0.001', channels: false }, () => 1),
};
const schemes = (app: ReturnType<typeof createSkillHandler>, name: string) =>
  app.termsOf(name)!.paymentRequired.accepts.map((a) => a.scheme);

describe('which skills offer a channel', () => {
  it('offers it after exact below $0.01 and where the skill asks, never where the skill refuses or above the threshold', async () => {
    const app = createSkillHandler(skills, base({ channels: { receiverAuthorizerKey: key, store: await tempFolder() } }));
    expect(schemes(app, 'cheap')).toEqual(['exact', 'batch-settlement']);
    expect(schemes(app, 'dear')).toEqual(['exact']);
    expect(schemes(app, 'forced')).toEqual(['exact', 'batch-settlement']);
    expect(schemes(app, 'never')).toEqual(['exact']);
    expect(app.termsOf('cheap')!.paymentRequired.accepts[1]).toEqual({
      scheme: 'batch-settlement',
      network: 'eip155:84532',
      amount: '1000',
      asset: asset.address,
      payTo: '0x000000000000000000000000000000000000dEaD',
      maxTimeoutSeconds: 60,
      extra: { receiverAuthorizer: privateKeyToAccount(key).address, withdrawDelay: 3600, name: 'USDC', version: '2' },
    });
    await app.close();
  });

  it('offers none without a receiver authorizer until the facilitator’s is known, then from the next request on', async () => {
    const app = createSkillHandler(skills, base({ channels: { store: await tempFolder(), minDeposit: '$0.5' } }));
    expect(schemes(app, 'cheap')).toEqual(['exact']);
    app.useReceiverAuthorizer('0x1111111111111111111111111111111111111111');
    expect(schemes(app, 'cheap')).toEqual(['exact', 'batch-settlement']);
    expect(app.termsOf('cheap')!.paymentRequired.accepts[1]!.extra).toMatchObject({ minDeposit: '500000' });
    expect(app.setPrice('cheap', '$0.02')).toBe(true); // above the threshold now
    expect(schemes(app, 'cheap')).toEqual(['exact']);
    await app.close();
  });

  it('offers none with channels false, and every skill with all', async () => {
    const off = createSkillHandler(skills, base({ channels: false, receiverAuthorizer: privateKeyToAccount(key).address }));
    expect(['cheap', 'forced'].map((n) => schemes(off, n))).toEqual([['exact'], ['exact']]);
    const all = createSkillHandler(skills, base({ channels: { all: true, receiverAuthorizerKey: key, store: await tempFolder() } }));
    expect(schemes(all, 'dear')).toEqual(['exact', 'batch-settlement']);
    expect(schemes(all, 'never')).toEqual(['exact']);
    await Promise.all([off.close(), all.close()]);
  });
});

describe('refused channel options', () => {
  it('names the option', () => {
    expect(() => skill({ price: '$0.001', channels: 'yes' as unknown as boolean }, () => 1)).toThrow(SkillDefinitionError);
    for (const [channels, text] of [
      [{ withdrawDelay: 60 }, 'channels.withdrawDelay'],
      [{ receiverAuthorizerKey: '0x12' }, 'channels.receiverAuthorizerKey'],
      [{ below: 'cheap' }, 'channels.below'],
      [{ claimWithinMs: 0 }, 'channels.claimWithinMs'],
      [{ withdrawDelay: 900, claimWithinMs: 900_000 }, 'must stay below channels.withdrawDelay'],
      // With the mirror's 60 s and a minute for the claim to be mined, 800 s of claims overrun 900 s.
      [{ withdrawDelay: 900, claimWithinMs: 800_000 }, '+ 60 s for the claim to be mined must stay below channels.withdrawDelay'],
    ] as const) {
      expect(() => createSkillHandler(skills, base({ channels: channels as never }))).toThrow(ServeConfigError);
      expect(() => createSkillHandler(skills, base({ channels: channels as never }))).toThrow(text);
    }
  });
});

describe('the file channel store', () => {
  it('belongs to one live process: a second owner is refused, a lock left by a dead process is taken over', async () => {
    const folder = await tempFolder();
    await writeFile(join(folder, '.lock'), String(process.ppid));
    await expect(fileChannelStore(folder)).rejects.toThrow(`in use by process ${process.ppid}`);
    const gone = Bun.spawn(['true']);
    await gone.exited;
    await writeFile(join(folder, '.lock'), String(gone.pid));
    const store = await fileChannelStore(folder);
    await store.close();
  });
});
