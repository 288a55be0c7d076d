/**
 * A payer's money back from a channel, from the page: the channel's server refunds what it did not
 * charge (its facilitator pays the gas, so the payer needs no ETH). The page rebuilds the channel's
 * config from what it knows (payer and receiver from the registry, the server's offer from its 402,
 * no salt, as our clients open channels) and finds who signs its vouchers: the browser's session
 * key (a channel Try it opened here) or the wallet itself (one opened by `market call`). The config
 * must hash to the channel's id: anything else is a channel this page cannot speak for.
 */
import { type ChannelRecord, refundChannel, type PaymentSigner, type RefundOutcome, toPaymentSigner } from 'skill-market/client';
import type { ChannelView } from 'skill-market/registry';
import { type ChannelConfig, channelIdOf, decodePaymentRequired, type Hex, PAYMENT_REQUIRED_HEADER } from 'skill-market/x402';
import { getAddress } from 'viem';
import { registry } from './api';
import { sessionAccount } from './channels';

/** A channel ready to be refunded: its record and who signs for it. */
export type RefundPlan =
  | { type: 'session-key'; record: ChannelRecord; signer: PaymentSigner }
  /** Signed by the wallet itself: the page asks it (an EIP-712 signature, no transaction). */
  | { type: 'wallet'; record: ChannelRecord; wallet: Hex }
  | { type: 'impossible'; why: string };

const ZERO_SALT = `0x${'0'.repeat(64)}` as Hex;

/** What the page needs to refund `view` on the chain `chainId`. */
export async function planRefund(view: ChannelView, chainId: number): Promise<RefundPlan> {
  if (!view.payer || !view.receiver)
    return { type: 'impossible', why: 'the registry has not read this channel on chain yet; try again shortly' };
  const slug = view.skills[0];
  if (!slug) return { type: 'impossible', why: 'no skill of this channel is known' };
  const skill = await registry.skill(slug);
  const probe = await fetch(skill.endpoint, { headers: { accept: 'application/json' } });
  const header = probe.headers.get(PAYMENT_REQUIRED_HEADER);
  const offer = header ? decodePaymentRequired(header).accepts.find((a) => a.scheme === 'batch-settlement') : undefined;
  const extra = offer?.extra as { receiverAuthorizer?: string; withdrawDelay?: number } | undefined;
  if (!offer || !extra?.receiverAuthorizer || typeof extra.withdrawDelay !== 'number')
    return { type: 'impossible', why: `the server of ${slug} no longer offers payment channels` };
  const configFor = (payerAuthorizer: string): ChannelConfig => ({
    payer: getAddress(view.payer!),
    payerAuthorizer: getAddress(payerAuthorizer),
    receiver: getAddress(view.receiver!),
    receiverAuthorizer: getAddress(extra.receiverAuthorizer!),
    token: getAddress(offer.asset),
    withdrawDelay: extra.withdrawDelay!,
    salt: ZERO_SALT,
  });
  const recordOf = (config: ChannelConfig): ChannelRecord => ({
    channelId: view.channelId as Hex,
    network: view.network,
    config,
    endpoint: skill.endpoint,
    balance: view.balanceAtomic ?? '0',
    charged: view.chargedAtomic,
  });
  const same = (config: ChannelConfig) => channelIdOf(config, chainId).toLowerCase() === view.channelId.toLowerCase();
  const session = sessionAccount();
  if (session && same(configFor(session.address)))
    return { type: 'session-key', record: recordOf(configFor(session.address)), signer: toPaymentSigner(session) };
  if (same(configFor(view.payer))) return { type: 'wallet', record: recordOf(configFor(view.payer)), wallet: getAddress(view.payer) };
  return {
    type: 'impossible',
    why: `its vouchers were signed by a key this browser does not hold (or its server changed its terms): get it back with \`market channels --refund ${view.channelId}\` where you paid from`,
  };
}

/** The refund itself. */
export function refund(record: ChannelRecord, signer: PaymentSigner): Promise<RefundOutcome> {
  return refundChannel({ record, signer, fetch: (input, init) => fetch(input, init) });
}
