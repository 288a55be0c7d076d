/**
 * Payment channels (x402 `batch-settlement`) on the skill server: the offer beside `exact` for the
 * skills its settings choose (once a receiver authorizer is known), the calls and refunds paid over
 * a channel (call.ts), the store that keeps the vouchers (store.ts) and the claims that turn them
 * into money (claims.ts).
 */
import { BATCH_SETTLEMENT_SCHEME } from '../../../x402/index';
import type { ChannelReader } from '../../../x402/channel-reader';
import type { FacilitatorClient } from '../../facilitator-client';
import type { CreatorLogger } from '../../logger';
import type { BaseRoute, SchemeKit, ServerScheme } from '../../scheme';
import { channelCall } from './call';
import { createClaimer, type ClaimRound } from './claims';
import { lazyFileStore } from './lazy-store';
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
}

/** The channel scheme, with what the skill server controls of it besides calls. */
export interface ChannelScheme extends ServerScheme {
  /** Offers channels with this receiver authorizer from now on; true when that changed the offers. */
  useReceiverAuthorizer(address: string): boolean;
  /** Claims and settles now every channel with an unclaimed charge (`all`), or only those due. */
  claim(all: boolean): Promise<ClaimRound>;
}

export function createChannelScheme(deps: ChannelSchemeDeps): ChannelScheme {
  const { settings } = deps;
  const now = deps.now ?? Date.now;
  let receiverAuthorizer = settings.authorizer?.address ?? deps.receiverAuthorizer;
  /** The last offer made: claims are sent with it (every offer shares receiver and token). */
  let lastOffer: ChannelRequirements | undefined;
  const store = typeof settings.store === 'string' ? lazyFileStore(settings.store, deps.logger) : settings.store;
  const claimer = createClaimer({
    store,
    facilitator: deps.facilitator,
    settings,
    chainId: deps.chainId,
    requirements: () => lastOffer,
    chain: deps.chain,
    logger: deps.logger,
    now,
  });
  const call = { kit: deps.kit, facilitator: deps.facilitator, store, settings, chainId: deps.chainId, logger: deps.logger, now };

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
    claim: (all) => claimer.run(all),
    async close() {
      claimer.stop();
      await store.close();
    },
  };
}
