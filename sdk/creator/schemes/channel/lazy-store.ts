/**
 * A file channel store opened on first use, so a server that never sells over a channel takes no
 * folder lock; a folder left by an earlier run is opened by the claims' first look (its vouchers
 * are owed).
 */
import { existsSync } from 'node:fs';
import type { CreatorLogger } from '../../logger';
import { fileChannelStore } from './file-store';
import type { ChannelStore } from './store';

export function lazyFileStore(folder: string, logger: CreatorLogger): ChannelStore {
  let opened: Promise<ChannelStore> | undefined;
  // A folder still held by a process on its way out (a restart), or damaged, is tried again at the next use.
  const store = () =>
    (opened ??= fileChannelStore(folder, { logger }).catch((error: unknown) => {
      opened = undefined;
      throw error;
    }));
  return {
    update: async (channelId, work, hint) => (await store()).update(channelId, work, hint),
    get: async (channelId) => (await store()).get(channelId),
    list: async () => (opened || existsSync(folder) ? (await store()).list() : []),
    close: async () => {
      if (opened) await (await opened.catch(() => undefined))?.close();
    },
  };
}
