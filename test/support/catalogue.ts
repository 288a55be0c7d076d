import { eq } from 'drizzle-orm';
import { paymentVerifications } from '../../src/db/schema';
import { markVerified } from '../../src/registry/modules/payment-verification/store';
import type { Database } from '../../src/db';
import { bearer, createKey, jsonPost, newWallet, walletSignIn } from './auth';

type Request = (path: string, init?: RequestInit) => Promise<Response>;

/** A signed-in creator with a creator key, able to make groups and skills. */
export interface Creator {
  token: string;
  key: string;
  address: string;
  userId: string;
  group(name?: string): Promise<{ slug: string; name: string; id: string }>;
  /** Registers a skill (paid to the creator's own address unless `paymentAddress` is given). */
  register(overrides?: Record<string, unknown>): Promise<Response>;
  /** Proves holding `account`'s key, so skills may name it as their payment address. */
  prove(account: MessageSigner): Promise<void>;
}

/** A wallet's account that signs messages locally (a viem account). */
export interface MessageSigner {
  address: string;
  signMessage(args: { message: string }): Promise<string>;
}

/**
 * Proves to the signed-in account of `token` (a session token or API key) that it holds
 * `account`'s key: POST /wallet/challenge, then POST /wallet/generate with the signed message. A
 * skill may only be paid to an address its creator has proven (or signs in with).
 */
export async function provePayee(request: Request, token: string, account: MessageSigner): Promise<void> {
  const challenge = await request('/wallet/challenge', jsonPost({ address: account.address }, bearer(token)));
  if (!challenge.ok) throw new Error(`wallet challenge: ${challenge.status} ${await challenge.text()}`);
  const { message } = (await challenge.json()) as { message: string };
  const proof = { message, signature: await account.signMessage({ message }) };
  const res = await request('/wallet/generate', jsonPost({ address: account.address, proof }, bearer(token)));
  if (!res.ok) throw new Error(`wallet proof: ${res.status} ${await res.text()}`);
}

/** A new creator, signed in with `wallet` (a fresh one unless given). */
export async function newCreator(request: Request, wallet?: Parameters<typeof walletSignIn>[1]): Promise<Creator> {
  const session = await walletSignIn(request, wallet);
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
      return request('/skills', jsonPost(skillInput({ paymentAddress: creator.address, ...overrides, groups }), bearer(key)));
    },
    prove: (account) => provePayee(request, key, account),
  };
  return creator;
}

/**
 * A valid registration body; overrides win. Its payment address is a fresh one nobody has proven:
 * give the creator's own (`paymentAddress: creator.address`) for a registration that succeeds.
 */
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

/**
 * Sends again while the registry answers 503 (the database did not answer within its statement
 * deadline, as a row under a hundred concurrent transactions can on a loaded machine), after a short
 * growing pause, as a client honouring Retry-After would. Only for requests that are safe to repeat.
 */
export async function untilAnswered(send: () => Promise<Response>, attempts = 20): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await send();
    if (res.status !== 503 || attempt >= attempts) return res;
    await res.body?.cancel();
    await Bun.sleep(20 * attempt + Math.random() * 50);
  }
}

/**
 * What the background verifier does once the chain confirms every reported transaction: each
 * pending check becomes verified for the listed amount. For tests of what verified payments
 * show (tables, series); the chain check itself is tested in test/catalogue/verified-payments.test.ts.
 */
export async function confirmReportedPayments(db: Database, now: Date): Promise<number> {
  const pending = await db.select().from(paymentVerifications).where(eq(paymentVerifications.status, 'pending'));
  // Each report is its own transfer (log index by report order) from a payer other than the skill.
  for (const [i, check] of pending.entries()) {
    const transfers = [{ payer: CONFIRMED_PAYER, logIndex: i }];
    await markVerified(db, check.id, { transfers, amount: check.expectedAmount, blockNumber: 1n }, now);
  }
  return pending.length;
}

/** The payer of every payment {@link confirmReportedPayments} confirms. */
export const CONFIRMED_PAYER = '0x00000000000000000000000000000000000000b1';

/** A distinct transaction hash for reports. */
export const txHash = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;
