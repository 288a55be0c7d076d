import type { SettleResponse, VerifyResponse } from 'skill-market/x402';

/** A `/verify` answer of the scheme: the channel snapshot in `extra`. */
export type ChannelVerifyResponse = VerifyResponse & { extra?: Record<string, unknown> };

/** A `/settle` answer of the scheme: `amount` moved ("" for a claim), `extra.channelState` where a channel changed. */
export type ChannelSettleResponse = SettleResponse & { amount?: string; asset?: string; extra?: Record<string, unknown> };
