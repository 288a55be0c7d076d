/**
 * Where a consumer keeps its payment channels between calls and runs: what it deposited and what
 * the server charged per channel. In memory, or in one small JSON file (Node and Bun; replaced
 * atomically: write, then rename). A lost record is rebuilt from the chain and the server's
 * corrective 402 (channel.ts), so the file is a convenience, never the only truth.
 */
import type { ChannelConfig, Hex } from '../../../x402/index';

/** One channel as this client knows it; amounts are atomic token units as decimal strings. */
export interface ChannelRecord {
  channelId: Hex;
  network: string;
  config: ChannelConfig;
  /** The endpoint that opened it (for listing and refunds). */
  endpoint?: string;
  /** Deposited and not withdrawn or refunded, as far as this client knows. */
  balance: string;
  /** The server's cumulative charge: the base of the next voucher. */
  charged: string;
  /** Why this client stopped signing on it (a server answer it could not accept); absent while usable. */
  stopped?: string;
  /** A call on it ended without telling what was charged: the balance is read again from the chain first. */
  resync?: boolean;
}

/** Keeps channel records; the channel scheme reads one before signing and writes it after each answer. */
export interface ChannelStore {
  get(channelId: Hex): Promise<ChannelRecord | undefined>;
  set(record: ChannelRecord): Promise<void>;
  list(): Promise<ChannelRecord[]>;
}

/**
 * Channel records in memory (a page, a test): lost with the process, rebuilt from the chain.
 *
 * @example const scheme = channelScheme({ store: memoryChannelStore(), maxDeposit: 1_000_000n });
 */
export function memoryChannelStore(): ChannelStore {
  const records = new Map<string, ChannelRecord>();
  // A record is flat but for its config (flat too): two spreads copy it (structuredClone cost more than the rest of a call's bookkeeping).
  const copy = (record: ChannelRecord): ChannelRecord => ({ ...record, config: { ...record.config } });
  return {
    get: async (id) => {
      const record = records.get(id.toLowerCase());
      return record && copy(record);
    },
    set: async (record) => void records.set(record.channelId.toLowerCase(), copy(record)),
    list: async () => [...records.values()].map(copy),
  };
}

/**
 * Channel records in the JSON file `path` (created with its folder on first write, mode 0600).
 *
 * @example const store = fileChannelStore(join(homedir(), '.market', 'channels.json'));
 */
export function fileChannelStore(path: string): ChannelStore {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task, task);
    queue = next.catch(() => undefined);
    return next;
  };
  const read = async (): Promise<Record<string, ChannelRecord>> => {
    const text = await fs()
      .readFile(path, 'utf8')
      .catch((error: { code?: string }) => {
        if (error.code === 'ENOENT') return '{"channels":{}}';
        throw error;
      });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${path} is not valid JSON; move it away (channels are recovered from the chain)`);
    }
    const channels = (parsed as { channels?: unknown }).channels;
    if (typeof channels !== 'object' || channels === null) throw new Error(`${path} is not a channel file this version understands`);
    return channels as Record<string, ChannelRecord>;
  };
  return {
    get: (id) => serial(async () => (await read())[id.toLowerCase()]),
    list: () => serial(async () => Object.values(await read())),
    set: (record) =>
      serial(async () => {
        const channels = await read();
        channels[record.channelId.toLowerCase()] = record;
        const { mkdir, rename, writeFile } = fs();
        await mkdir(folderOf(path), { recursive: true, mode: 0o700 });
        const temporary = `${path}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`;
        await writeFile(temporary, `${JSON.stringify({ channels }, null, 2)}\n`, { mode: 0o600 });
        await rename(temporary, path);
      }),
  };
}

/** The few node:fs/promises functions the file store uses (no Node types in a page's build). */
interface Files {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  writeFile(path: string, data: string, options: { mode: number }): Promise<void>;
  mkdir(path: string, options: { recursive: true; mode: number }): Promise<unknown>;
  rename(from: string, to: string): Promise<void>;
}

function fs(): Files {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const module = runtime?.getBuiltinModule?.('node:fs/promises') as Files | undefined;
  if (!module) throw new Error('A channel file needs Node 20.16+ or Bun (no file system here): use memoryChannelStore()');
  return module;
}

function folderOf(path: string): string {
  const cut = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return cut <= 0 ? (cut === 0 ? '/' : '.') : path.slice(0, cut);
}
