import { afterAll, beforeAll } from 'bun:test';
import type { RegistryConfig } from '../../src/config';
import type { DatabaseHandle, DatabaseKind } from '../../src/db';
import { authTestConfig, bearer, createKey, jsonPost, newWallet, providerKeys, walletSignIn } from './auth';
import { openTestDatabase } from './database';
import { manualClock, registryWith } from './registry';

type Request = (path: string, init?: RequestInit) => Promise<Response>;

/** A signed-in creator with a creator key, able to make groups and skills. */
export interface Creator {
  token: string;
  key: string;
  address: string;
  userId: string;
  group(name?: string): Promise<{ slug: string; name: string; id: string }>;
  register(overrides?: Record<string, unknown>): Promise<Response>;
}

export async function newCreator(request: Request): Promise<Creator> {
  const session = await walletSignIn(request);
  const { key } = await createKey(request, session.token, 'creator');
  const creator: Creator = {
    token: session.token,
    key,
    address: session.creator.walletAddress,
    userId: session.creator.id,
    async group(name = `group-${crypto.randomUUID().slice(0, 8)}`) {
      const res = await request('/groups', jsonPost({ name }, bearer(key)));
      if (res.status !== 201) throw new Error(`group: ${res.status} ${await res.text()}`);
      return (await res.json()) as { slug: string; name: string; id: string };
    },
    async register(overrides = {}) {
      const groups = overrides.groups ?? [(await creator.group()).name];
      return request('/skills', jsonPost(skillInput({ ...overrides, groups }), bearer(key)));
    },
  };
  return creator;
}

/** A valid registration body; overrides win. */
export function skillInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `skill-${crypto.randomUUID().slice(0, 8)}`,
    endpoint: 'https://skills.example.com',
    price: '$0.001',
    paymentAddress: newWallet().address,
    description: 'A useful skill',
    groups: ['default'],
    ...overrides,
  };
}

export const json = async <T = any>(res: Response): Promise<T> => (await res.json()) as T;
