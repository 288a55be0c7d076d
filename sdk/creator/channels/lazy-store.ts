/** A file channel store opened on first use, so a handler that never sees a channel payment takes no folder lock. */
import { fileChannelStore } from './file-store';
import type { ChannelStore } from './store';

export function lazyFileStore(folder: string): ChannelStore {
  let opened: Promise<ChannelStore> | undefined;
  const store = () => (opened ??= fileChannelStore(folder));
  return {
    update: async (channelId, work) => (await store()).update(channelId, work),
    get: async (channelId) => (await store()).get(channelId),
    list: async () => (opened ? (await store()).list() : []),
    close: async () => {
      if (opened) await (await opened.catch(() => undefined))?.close();
    },
  };
}
