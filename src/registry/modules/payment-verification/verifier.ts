import { createPublicClient, getAddress, http, type Hash, type Hex, type PublicClient } from 'viem';
import type { PaymentVerificationConfig } from '../../../config';
import type { ChainConfig } from '../../../config/chain';
import type { Database } from '../../../db';
import type { Logger } from '../../../log';
import type { Clock } from '../../context';
import { backgroundRounds } from '../../../runtime/rounds';
import { type ChannelRound, checkDueChannels, isChannelVoucher } from '../channel-revenue';
import { checkPaymentOnChain, TRANSACTION_NOT_FOUND } from './chain-check';
import { claimPayment, dropChannelReport, duePayments, markInconclusive, markRejected, markVerified } from './store';

/** What one round of checks decided. */
export interface VerificationRound {
  checked: number;
  verified: number;
  rejected: number;
  retried: number;
  /** The payment channels checked in the same round (calls paid over channels). */
  channels: ChannelRound;
}

export interface PaymentVerifier {
  /** Checks every due payment now; resolves once all outcomes are stored. A running round is joined. */
  verifyNow(): Promise<VerificationRound>;
  /** Background rounds every `intervalMs` until `stop()`. */
  start(): void;
  stop(): Promise<void>;
}

export interface PaymentVerifierDeps {
  db: Database;
  config: PaymentVerificationConfig;
  /** The chain this registry reads (`MARKET_NETWORK`, `MARKET_USDC_ADDRESS`, `MARKET_RPC_URL`). */
  chain: ChainConfig;
  clock: Clock;
  logger: Logger;
  client?: PublicClient;
  /** Told what each round decided (the metrics count it). */
  onRound?: (round: VerificationRound) => void;
}

const BATCH = 100;
const CONCURRENCY = 4;
/** A claimed check is not taken by another instance for this long (an RPC call takes far less). */
const LEASE_SECONDS = 60;

/**
 * Checks reported payments against the chain in the background: bounded concurrency, a bounded
 * number of attempts with a doubling pause, and a lease per check so instances sharing PostgreSQL
 * split the work. Only payments on the registry's own network can be checked; the asset is the
 * network's USDC as configured. Each round also checks the payment channels calls were paid over
 * (channel-revenue).
 */
export function createPaymentVerifier(deps: PaymentVerifierDeps): PaymentVerifier {
  const { db, config, chain, clock, logger } = deps;
  const client =
    deps.client ?? (createPublicClient({ transport: http(chain.rpcUrl, { timeout: chain.rpcTimeoutMs, retryCount: 0 }) }) as PublicClient);

  async function checkOne(check: Awaited<ReturnType<typeof duePayments>>[number], round: VerificationRound): Promise<void> {
    if (!(await claimPayment(db, check.id, clock.now(), LEASE_SECONDS))) return;
    round.checked += 1;
    if (check.network !== chain.network) {
      await markRejected(
        db,
        check.id,
        `the skill is paid on ${check.network}; this registry verifies payments on ${chain.network} only`,
        clock.now(),
      );
      round.rejected += 1;
      return;
    }
    const verdict = await checkPaymentOnChain(client, {
      txHash: check.txHash as Hash,
      nonce: (check.nonce ?? undefined) as Hex | undefined,
      asset: chain.usdcAddress,
      payTo: getAddress(check.payTo),
      amount: check.expectedAmount,
    });
    switch (verdict.type) {
      case 'verified': {
        const transfers = verdict.transfers.map((t) => ({ payer: getAddress(t.payer), logIndex: t.logIndex }));
        const decided = await markVerified(
          db,
          check.id,
          { transfers, amount: verdict.amount, blockNumber: verdict.blockNumber, scheme: verdict.scheme },
          clock.now(),
        );
        if (decided === 'rejected') round.rejected += 1;
        else if (decided) round.verified += 1;
        return;
      }
      case 'rejected':
        await markRejected(db, check.id, verdict.reason, clock.now());
        round.rejected += 1;
        return;
      case 'channel-deposit':
        await dropChannelReport(db, check.id, { txHash: check.txHash, channelId: verdict.channelId, amount: verdict.amount });
        return;
      case 'retry':
        // An older client named a channel call by its voucher's digest: no transaction will ever have that hash.
        if (verdict.reason === TRANSACTION_NOT_FOUND && (await isChannelVoucher(db, check.skillId, check.txHash))) {
          await dropChannelReport(db, check.id);
          return;
        }
        round[(await markInconclusive(db, check, verdict.reason, clock.now(), config)) === 'retry' ? 'retried' : 'rejected'] += 1;
        return;
    }
  }

  async function round(): Promise<VerificationRound> {
    const result: VerificationRound = {
      checked: 0,
      verified: 0,
      rejected: 0,
      retried: 0,
      channels: { checked: 0, counted: 0, refused: 0 },
    };
    const queue = await duePayments(db, clock.now(), BATCH);
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        await checkOne(next, result).catch((error: unknown) =>
          logger.warn('payment verification failed to record', { paymentId: next.id, error }),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    result.channels = await checkDueChannels({ db, config, chain, clock, logger, client });
    deps.onRound?.(result);
    return result;
  }

  const rounds = backgroundRounds(round, () => config.intervalMs, logger, 'payment verification');
  return { verifyNow: rounds.now, start: rounds.start, stop: rounds.stop };
}
