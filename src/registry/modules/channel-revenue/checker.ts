import { createPublicClient, getAddress, http, type Address, type Hex, type PublicClient } from 'viem';
import type { PaymentVerificationConfig } from '../../../config';
import type { ChainConfig } from '../../../config/chain';
import type { Database } from '../../../db';
import type { Logger } from '../../../log';
import type { Clock } from '../../context';
import { and, eq, inArray, isNull, lte, or } from 'drizzle-orm';
import { paymentChannels } from '../../../db/schema';
import { type ChannelOnChain, readChannel } from './chain-check';
import { decideChannel, dueChannels, leaseChannel, markChannelUndecided } from './store';

/** What one round of channel checks did. */
export interface ChannelRound {
  checked: number;
  counted: number;
  refused: number;
}

export interface ChannelCheckDeps {
  db: Database;
  config: PaymentVerificationConfig;
  chain: ChainConfig;
  clock: Clock;
  logger: Logger;
  client: PublicClient;
}

const BATCH = 100;
const CONCURRENCY = 4;
const LEASE_SECONDS = 60;

/**
 * One round over the watched channels whose time has come: read each on chain and decide its
 * records (store.ts). Run by the payment verifier's background rounds, beside the exact payments.
 */
export async function checkDueChannels(deps: ChannelCheckDeps): Promise<ChannelRound> {
  const { db, config, chain, clock, logger } = deps;
  const round: ChannelRound = { checked: 0, counted: 0, refused: 0 };
  const queue = await dueChannels(db, clock.now(), BATCH);
  const checkOne = async (channel: Channel) => {
    if (!(await leaseChannel(db, channel.channelId, clock.now(), LEASE_SECONDS))) return;
    round.checked += 1;
    if (channel.network !== chain.network) {
      const reason = `the channel is on ${channel.network}; this registry reads ${chain.network} only`;
      if ((await markChannelUndecided(db, channel, reason, 'unreadable-here', clock.now(), config)) === 'refused') round.refused += 1;
      return;
    }
    const verdict = await readOne(deps, channel);
    if (verdict.type !== 'found') {
      const missing = verdict.type === 'missing';
      const reason = missing ? 'no such channel on chain (yet)' : verdict.reason;
      if ((await markChannelUndecided(db, channel, reason, missing ? 'missing' : 'unreadable', clock.now(), config)) === 'refused')
        round.refused += 1;
      return;
    }
    const decided = await decideOne(deps, channel, verdict.channel);
    round.counted += decided.counted;
    round.refused += decided.refused;
  };
  await inParallel(queue, (next) =>
    checkOne(next).catch((error: unknown) => logger.warn('channel check failed to record', { channelId: next.channelId, error })),
  );
  return round;
}

/**
 * Reads the given channels on chain again now, those on this registry's network whose last read
 * is older than `freshSeconds`, and decides their records as a background check would (a page
 * showing a payer their channels). A channel that cannot be read now keeps its last state: the
 * background checks deal with it. Never rejects.
 */
async function refreshChannels(deps: ChannelCheckDeps, channelIds: readonly string[], freshSeconds: number): Promise<void> {
  const { db, chain, clock, logger } = deps;
  if (channelIds.length === 0) return;
  const staleBefore = new Date(clock.now().getTime() - freshSeconds * 1000);
  const channels = await db
    .select()
    .from(paymentChannels)
    .where(
      and(
        inArray(paymentChannels.channelId, [...channelIds]),
        eq(paymentChannels.network, chain.network),
        or(isNull(paymentChannels.checkedAt), lte(paymentChannels.checkedAt, staleBefore)),
      ),
    );
  await inParallel(channels, async (channel) => {
    try {
      const verdict = await readOne(deps, channel);
      if (verdict.type === 'found') await decideOne(deps, channel, verdict.channel);
    } catch (error) {
      logger.warn('channel refresh failed', { channelId: channel.channelId, error });
    }
  });
}

/** Reads channels again on demand ({@link refreshChannels}) through one client of the registry's chain RPC. */
export type ChannelRefresher = (channelIds: readonly string[], freshSeconds: number) => Promise<void>;

/** A {@link ChannelRefresher} over `deps.chain`'s RPC (bounded by its timeout, no retries). */
export function channelRefresher(deps: Omit<ChannelCheckDeps, 'client'>): ChannelRefresher {
  const { chain } = deps;
  const client = createPublicClient({ transport: http(chain.rpcUrl, { timeout: chain.rpcTimeoutMs, retryCount: 0 }) }) as PublicClient;
  return (channelIds, freshSeconds) => refreshChannels({ ...deps, client }, channelIds, freshSeconds);
}

type Channel = typeof paymentChannels.$inferSelect;

function readOne(deps: ChannelCheckDeps, channel: Channel) {
  const known =
    channel.payer && channel.receiver && channel.token
      ? { payer: getAddress(channel.payer), receiver: getAddress(channel.receiver), token: getAddress(channel.token) as Address }
      : undefined;
  return readChannel(deps.client, channel.channelId as Hex, known, { fromBlock: deps.chain.channelsFromBlock });
}

function decideOne(deps: ChannelCheckDeps, channel: Channel, onChain: ChannelOnChain) {
  const { db, chain, clock, config } = deps;
  return decideChannel(db, channel.channelId, onChain, { network: chain.network, token: chain.usdcAddress }, clock.now(), config);
}

/** `work` over every item, {@link CONCURRENCY} at a time. */
async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await work(next);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
}
