import { getAddress, type Address, type Hex, type PublicClient } from 'viem';
import type { PaymentVerificationConfig } from '../../../config';
import type { ChainConfig } from '../../../config/chain';
import type { Database } from '../../../db';
import type { Logger } from '../../../log';
import type { Clock } from '../../context';
import { readChannel } from './chain-check';
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
  const { db, config, chain, clock, logger, client } = deps;
  const round: ChannelRound = { checked: 0, counted: 0, refused: 0 };
  const queue = await dueChannels(db, clock.now(), BATCH);
  const checkOne = async (channel: (typeof queue)[number]) => {
    if (!(await leaseChannel(db, channel.channelId, clock.now(), LEASE_SECONDS))) return;
    round.checked += 1;
    if (channel.network !== chain.network) {
      const reason = `the channel is on ${channel.network}; this registry reads ${chain.network} only`;
      if ((await markChannelUndecided(db, channel, reason, 'unreadable-here', clock.now(), config)) === 'refused') round.refused += 1;
      return;
    }
    const known =
      channel.payer && channel.receiver && channel.token
        ? { payer: getAddress(channel.payer), receiver: getAddress(channel.receiver), token: getAddress(channel.token) as Address }
        : undefined;
    const verdict = await readChannel(client, channel.channelId as Hex, known, { fromBlock: chain.channelsFromBlock });
    if (verdict.type !== 'found') {
      const missing = verdict.type === 'missing';
      const reason = missing ? 'no such channel on chain (yet)' : verdict.reason;
      if ((await markChannelUndecided(db, channel, reason, missing ? 'missing' : 'unreadable', clock.now(), config)) === 'refused')
        round.refused += 1;
      return;
    }
    const decided = await decideChannel(
      db,
      channel.channelId,
      verdict.channel,
      { network: chain.network, token: chain.usdcAddress },
      clock.now(),
      config,
    );
    round.counted += decided.counted;
    round.refused += decided.refused;
  };
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      await checkOne(next).catch((error: unknown) => logger.warn('channel check failed to record', { channelId: next.channelId, error }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  return round;
}
