/**
 * Payment channels (x402 `batch-settlement`) on the skill server: the offer beside `exact` for the
 * skills its settings choose (once a receiver authorizer is known), the calls and refunds paid over
 * a channel (call.ts), the store that keeps the vouchers (store.ts) and the call records for the
 * registry (outbox.ts), and the claims that turn vouchers into money (claims.ts).
 */
import { BATCH_SETTLEMENT_SCHEME, formatPrice } from '../../../x402/index';
import type { ChannelReader } from '../../../x402/channel-reader';
import type { FacilitatorClient } from '../../facilitator-client';
import type { CreatorLogger } from '../../logger';
import type { ChannelBacklog, ServerObserver } from '../../observer';
import type { BaseRoute, SchemeKit, ServerScheme, SettledCall } from '../../scheme';
import { channelCall } from './call';
import { createClaimer, type ClaimRound } from './claims';
import { lazyFileStore } from './lazy-store';
import { createCallOutbox } from './outbox';
import { channelRequirements, offersChannel, type ChannelRequirements, type ChannelSettings } from './settings';

export interface ChannelSchemeDeps {
  kit: SchemeKit;
  settings: ChannelSettings;
  facilitator: FacilitatorClient;
  chainId: number;
  logger: CreatorLogger;
  /** The facilitator's receiver authorizer when known at start (the settings' own key wins). */
  receiverAuthorizer?: string | undefined;
  /** The chain, for the claimer to see withdrawals on channels that make no calls. */
  chain?: ChannelReader | undefined;
  now?: () => number;
  /** Whether calls are reported to the registry: each call's record is then kept with its channel until {@link ChannelScheme.delivered}. */
  reportCalls?: boolean;
  /** The token's decimals (the amounts of kept records, for people). */
  decimals?: number;
  /** Told of each claim and settle. */
  observer?: ServerObserver | undefined;
}

/** The channel scheme, with what the skill server controls of it besides calls. */
export interface ChannelScheme extends ServerScheme {
  /** Offers channels with this receiver authorizer from now on; true when that changed the offers. */
  useReceiverAuthorizer(address: string): boolean;
  /** Claims and settles now every channel with an unclaimed charge (`all`), or only those due. */
  claim(all: boolean): Promise<ClaimRound>;
  /** What the channels owe not yet claimed or settled. */
  backlog(): Promise<ChannelBacklog>;
  /**
   * The call records the channels keep for the registry (those of an earlier run not yet delivered).
   * Opens a file store that holds channels; rejects (ChannelStoreDamagedError) when it is damaged.
   */
  keptCalls(): Promise<SettledCall[]>;
  /** Call tracking delivered this channel call's record (or the registry refused it for good): the channel need not keep it. */
  delivered(call: SettledCall): void;
}

export function createChannelScheme(deps: ChannelSchemeDeps): ChannelScheme {
  const { settings } = deps;
  const now = deps.now ?? Date.now;
  let receiverAuthorizer = settings.authorizer?.address ?? deps.receiverAuthorizer;
  /** The last offer made: claims are sent with it (every offer shares receiver and token). */
  let lastOffer: ChannelRequirements | undefined;
  const store = typeof settings.store === 'string' ? lazyFileStore(settings.store, deps.logger) : settings.store;
  const outbox = createCallOutbox(deps.reportCalls ?? false);
  const network = `eip155:${deps.chainId}`;
  const claimer = createClaimer({
    store,
    facilitator: deps.facilitator,
    settings,
    chainId: deps.chainId,
    requirements: () => lastOffer,
    chain: deps.chain,
    logger: deps.logger,
    now,
    outbox,
    observer: deps.observer,
  });
  const call = { kit: deps.kit, facilitator: deps.facilitator, store, settings, chainId: deps.chainId, logger: deps.logger, now, outbox };

  return {
    id: BATCH_SETTLEMENT_SCHEME,
    offer(route: BaseRoute) {
      if (!receiverAuthorizer || !offersChannel(settings, route.amount, route.skill.channels)) return undefined;
      lastOffer = channelRequirements(route.terms, receiverAuthorizer, settings);
      return lastOffer;
    },
    pay: (paid) => channelCall(call, paid),
    // The reference client sends its cooperative refund with GET; nothing else is taken by GET.
    get: async (paid) =>
      (paid.payload.payload as { type?: unknown } | undefined)?.type === 'refund' ? channelCall(call, paid) : undefined,
    useReceiverAuthorizer(address) {
      if (settings.authorizer || receiverAuthorizer?.toLowerCase() === address.toLowerCase()) return false;
      receiverAuthorizer = address;
      return true;
    },
    // Asked for (claimChannels): waits for another server's round on a shared store, never skipped.
    claim: (all) => claimer.run(all, true),
    backlog: () => claimer.backlog(),
    async keptCalls() {
      const states = await store.list();
      return states.flatMap((state) =>
        outbox.records(state).map(
          (record): SettledCall => ({
            skill: record.skill,
            scheme: BATCH_SETTLEMENT_SCHEME,
            amount: formatPrice(record.amount, deps.decimals ?? 6),
            amountAtomic: record.amount.toString(),
            payer: state.config.payer,
            transaction: '',
            nonce: '',
            network,
            channelId: state.channelId.toLowerCase(),
            chargedCumulativeAmount: record.cumulative.toString(),
          }),
        ),
      );
    },
    delivered(call) {
      if (call.channelId && call.chargedCumulativeAmount) outbox.acknowledge(call.channelId, call.chargedCumulativeAmount);
    },
    async close() {
      claimer.stop();
      await store.close();
    },
  };
}
